import Foundation

/// The `cupcake` client's way to run `serve` and `backup`: it replaces itself (execv, so the
/// process id, its standard streams and its signals stay the same) with `cupcake-server`, found
/// beside the running executable, else on `PATH`.
package struct ServerExecutable: ServerSide {
    /// The executable's name.
    static let name = "cupcake-server"

    package init() {}

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
        execv(path, pointers)
        let reason = String(cString: strerror(errno))
        throw CLIError(.unavailable, "Cannot start \(path): \(reason).")
    }

    /// `cupcake-server` beside this executable (`/proc/self/exe`), else the first on `PATH`.
    static func locate(environment: [String: String]) -> String? {
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
