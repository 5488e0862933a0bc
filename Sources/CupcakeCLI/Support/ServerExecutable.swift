import CupcakeCheckout
import Glibc

/// The `cupcake` client's way to run `serve` and `backup`: it replaces itself (execv, so the
/// process id, its standard streams and its signals stay the same) with `cupcake-server`, found
/// beside the running executable, else on `PATH`.
package struct ServerExecutable: ServerSide, @unchecked Sendable {
    // Safe: `signalMask` is a plain C value, written once in `init` and only read after.
    /// The executable's name.
    static let name = "cupcake-server"
    /// The signal mask the process started with. `execv` keeps the calling thread's mask, and
    /// the command runs on a thread of Swift's pool, which blocks nearly every signal: without
    /// this, `cupcake-server` would start with SIGHUP, SIGQUIT and the rest blocked.
    private let signalMask: sigset_t

    /// Call on the main thread before any other thread starts: it records the signal mask.
    package init() {
        var mask = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &mask)
        signalMask = mask
    }

    package func run(_ command: any CommandSpec.Type, _ arguments: ParsedArguments, words: [String], console: Console)
        async throws(CLIError)
    {
        guard let path = Self.locate(environment: console.environment) else {
            throw CLIError(
                .unavailable,
                "'cupcake \(command.path.joined(separator: " "))' runs in \(Self.name), which is not beside "
                    + "cupcake nor on PATH. Build it with 'swift build -c release --static-swift-stdlib' "
                    + "and keep both executables together.")
        }
        let argv = [Self.name] + words
        var pointers = argv.map { strdup($0) }
        pointers.append(nil)
        var mask = signalMask
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        execv(path, pointers)
        let reason = String(cString: strerror(errno))
        throw CLIError(.unavailable, "Cannot start \(path): \(reason).")
    }

    /// `cupcake-server` beside this executable (`/proc/self/exe`), else the first on `PATH`.
    static func locate(environment: Environment) -> String? {
        var folders: [String] = []
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        if length > 0 {
            let own = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            folders.append(String(own[..<(own.lastIndex(of: "/") ?? own.startIndex)]))
        }
        folders += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return folders.lazy.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}
