import Foundation

/// A real `cupcake serve` child process on a free loopback port, for tests that restart,
/// signal or kill the server. Stops (SIGKILL) when released if still running.
public final class ServerProcess: @unchecked Sendable {
    // Safe: used from one test at a time; the fields change only in start/stop.
    private var process: Process?
    private let logFile: URL
    /// The database: a SQLite file, or a PostgreSQL URL.
    public let databasePath: String
    /// The bound port.
    public private(set) var port = 0
    /// Extra arguments to `cupcake serve`.
    public let arguments: [String]
    private let environment: [String: String]
    private let fileSizeLimitKiB: Int?
    private let wrapper: [String]

    /// Starts `cupcake serve --port 0 --database PATH` plus `arguments` and waits (≤ 20 s) for
    /// its startup line. With `fileSizeLimitKiB`, the server runs under that `ulimit -f`; with a
    /// `wrapper` (a program and its arguments, such as strace), under that program, which must
    /// run the command it is given as its child.
    public init(
        databasePath: String, arguments: [String] = [], environment: [String: String] = [:],
        fileSizeLimitKiB: Int? = nil, wrapper: [String] = []
    ) throws {
        self.databasePath = databasePath
        self.arguments = arguments
        self.environment = environment
        self.fileSizeLimitKiB = fileSizeLimitKiB
        self.wrapper = wrapper
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cupcake-serve-\(UUID().uuidString).log")
        try start()
    }

    deinit {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: logFile)
    }

    /// The base URL, e.g. `http://127.0.0.1:41234`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Everything the server wrote to standard error.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The process id while running.
    public var processID: Int32? { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }

    /// Whether the process is alive.
    public var isRunning: Bool { process?.isRunning ?? false }

    /// Starts (again) on the same database; the port may change.
    public func start() throws {
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: logFile)
        handle.seekToEndOfFile()
        let process = Process()
        let serve = ["serve", "--host", "127.0.0.1", "--port", "0", "--database", databasePath] + arguments
        if let fileSizeLimitKiB {
            // The shell sets the limit, then becomes the server (same process id).
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments =
                ["-c", "ulimit -f \(fileSizeLimitKiB) && exec \"$0\" \"$@\"", ProcessRunner.cupcakeExecutable.path]
                + serve
        } else if let program = wrapper.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(wrapper.dropFirst()) + [ProcessRunner.cupcakeExecutable.path] + serve
        } else {
            process.executableURL = ProcessRunner.cupcakeExecutable
            process.arguments = serve
        }
        var environment = ProcessInfo.processInfo.environment
        environment["CUPCAKE_API_KEY"] = nil
        process.environment = environment.merging(self.environment) { $1 }
        process.standardError = handle
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        let before = log.components(separatedBy: "listening on").count
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let text = log
            let parts = text.components(separatedBy: "listening on http://127.0.0.1:")
            if parts.count > before, let last = parts.last, let port = Int(last.prefix(while: \.isNumber)) {
                self.port = port
                return
            }
            if !process.isRunning { break }
            usleep(20_000)
        }
        throw TestSocketError(message: "cupcake serve did not start: \(log)")
    }

    /// Sends a signal (under a wrapper: to the server, the wrapper's child) and waits (≤ 20 s)
    /// for the exit; returns the exit status (the wrapper's, under one).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32 {
        guard let process else { return -1 }
        if process.isRunning {
            let children = wrapper.isEmpty ? [] : Self.children(of: process.processIdentifier)
            for child in children { kill(child, signal) }
            if children.isEmpty { kill(process.processIdentifier, signal) }
        }
        // A wrapper (strace) may take a while after its child to write out what it recorded.
        let deadline = Date().addingTimeInterval(wrapper.isEmpty ? 20 : 120)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The processes whose parent is `parent` (from /proc, every thread's list).
    static func children(of parent: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(parent)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(parent)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// kill -9: no chance to finish anything.
    public func kill9() {
        stop(signal: SIGKILL)
    }
}
