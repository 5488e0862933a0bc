import CupcakeCLI
import CupcakeCheckout
import CupcakeServerCommands
import Foundation

/// A console for in-process tests: canned standard input, captured output.
public final class TestConsole: @unchecked Sendable {
    // Safe: every access to the buffers goes through `lock`.
    private let lock = NSLock()
    private var outBuffer = ""
    private var errBuffer = ""
    private let input: Data?
    private let environment: [String: String]
    /// Lines a person types at the terminal, answered one per question.
    private var typed: [String]

    /// - Parameters:
    ///   - stdin: what standard input holds; `nil` means a terminal.
    ///   - environment: the environment the command sees.
    public init(stdin: String? = nil, environment: [String: String] = [:]) {
        input = stdin.map { Data($0.utf8) }
        self.environment = environment
        typed = []
    }

    /// A terminal on which a person types `lines`, one per question asked.
    public init(typing lines: [String], environment: [String: String] = [:]) {
        input = nil
        self.environment = environment
        typed = lines
    }

    /// - Parameters:
    ///   - stdinBytes: the exact bytes standard input holds (any, even invalid UTF-8).
    ///   - environment: the environment the command sees.
    public init(stdinBytes: Data, environment: [String: String] = [:]) {
        input = stdinBytes
        self.environment = environment
        typed = []
    }

    /// Everything written to standard output.
    public var stdout: String { lock.withLock { outBuffer } }
    /// Everything written to standard error.
    public var stderr: String { lock.withLock { errBuffer } }

    /// The console to hand to a command.
    public var console: Console {
        Console(
            readInput: { [input] in input ?? Data() },
            inputIsTerminal: input == nil,
            readLine: {
                self.lock.withLock { self.typed.isEmpty ? nil : self.typed.removeFirst() }
            },
            out: { text in self.lock.withLock { self.outBuffer += text } },
            err: { text in self.lock.withLock { self.errBuffer += text } },
            environment: Environment(environment)
        )
    }

    /// Runs `cupcake` in-process with these arguments and returns its exit status.
    public func run(_ arguments: [String]) async -> Int32 {
        await CommandLineTool.run(arguments, console: console, serverSide: InProcessServerSide())
    }
}
