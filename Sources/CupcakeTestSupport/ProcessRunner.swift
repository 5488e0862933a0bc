import Foundation

/// Runs the built `cupcake` binary (or another program) as a child process, for end-to-end tests.
public enum ProcessRunner {
    /// What a finished process left behind.
    public struct Result: Sendable {
        /// The exit status.
        public var status: Int32
        /// Standard output as text.
        public var stdout: String
        /// Standard error as text.
        public var stderr: String
    }

    /// Whether the tests run against a `cupcake` named by `CUPCAKE_TEST_CLIENT` (scripts/test
    /// runs the end-to-end suites a second time against the release build the README names).
    public static var testsReleaseClient: Bool { clientOverride != nil }

    /// `CUPCAKE_TEST_CLIENT`, when set and not empty.
    private static var clientOverride: String? {
        ProcessInfo.processInfo.environment["CUPCAKE_TEST_CLIENT"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The `cupcake` executable under test: `CUPCAKE_TEST_CLIENT` when set (its `cupcake-server`
    /// beside it), else the one `swift build` put beside the test bundle.
    public static var cupcakeExecutable: URL {
        if let path = clientOverride { return URL(fileURLWithPath: path) }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        // The test runner may be inside `cupcakePackageTests.xctest`, or beside it.
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("cupcake")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return bundle.deletingLastPathComponent().appendingPathComponent("cupcake")
    }

    /// Runs `cupcake` with arguments, optional standard input and extra environment, and waits
    /// at most `timeout` seconds (then kills it).
    public static func cupcake(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Double = 60
    ) throws -> Result {
        try run(
            cupcakeExecutable, arguments, stdin: stdin.map { Data($0.utf8) }, environment: environment, timeout: timeout
        )
    }

    /// Runs any executable; standard input is `/dev/null` when none is given. `whileRunning`,
    /// when given, is called with the process id once the process has started (and its input is
    /// written), before waiting for it to end.
    public static func run(
        _ executable: URL, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        timeout: Double = 60, whileRunning: ((Int32) -> Void)? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let outFile = try TemporaryFile()
        let errFile = try TemporaryFile()
        process.standardOutput = outFile.handle
        process.standardError = errFile.handle
        let inPipe = Pipe()
        process.standardInput = stdin == nil ? FileHandle(forReadingAtPath: "/dev/null") : inPipe
        try process.run()
        if let stdin {
            try? inPipe.fileHandleForWriting.write(contentsOf: stdin)
            try? inPipe.fileHandleForWriting.close()
        }
        whileRunning?(process.processIdentifier)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline {
            usleep(5_000)
        }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: try outFile.contents(), stderr: try errFile.contents())
    }
}

/// A file in the temporary directory, removed when released.
public final class TemporaryFile: @unchecked Sendable {
    // Safe: the handle and URL are set once in init and never replaced.
    /// Where it is.
    public let url: URL
    let handle: FileHandle

    /// Creates an empty temporary file.
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cupcake-test-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = try FileHandle(forWritingTo: url)
    }

    func contents() throws -> String {
        String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    deinit {
        try? handle.close()
        try? FileManager.default.removeItem(at: url)
    }
}

/// A directory in the temporary directory, removed with everything in it when released.
public final class TemporaryDirectory: @unchecked Sendable {
    // Safe: immutable after init.
    /// Where it is.
    public let url: URL

    /// Creates an empty temporary directory.
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cupcake-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
