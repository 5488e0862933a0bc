import Foundation

/// A `cupcake` command running as a child process, its output readable while it runs: for
/// tests that act while a long command (`cupcake track --follow`) is still going.
///
/// A child process makes progress on its own. A command run in-process shares the test
/// runner's few cooperative threads with every test running beside it, so a deadline that the
/// test measures can pass while the command was never scheduled at all.
public final class CommandProcess: @unchecked Sendable {
    // Safe: the process and files are set once in init; `Process` may be asked from any thread.
    private let process: Process
    private let outFile: TemporaryFile
    private let errFile: TemporaryFile

    /// Starts `cupcake` with `arguments`, standard input `/dev/null`, and `environment` added to
    /// this process's.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = ProcessRunner.cupcakeExecutable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        outFile = try TemporaryFile()
        errFile = try TemporaryFile()
        process.standardOutput = outFile.handle
        process.standardError = errFile.handle
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Everything written to standard output so far.
    public var stdout: String { (try? outFile.contents()) ?? "" }

    /// Everything written to standard error so far.
    public var stderr: String { (try? errFile.contents()) ?? "" }

    /// Waits (at most `seconds`) for the command to end; its exit status, or `nil` when it was
    /// still running (it is then killed).
    public func wait(seconds: Double = 60) async -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try? await Task.sleep(nanoseconds: 10_000_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
