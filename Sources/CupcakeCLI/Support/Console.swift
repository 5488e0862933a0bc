import CupcakeCheckout
import FoundationEssentials
import Glibc

/// Where a command reads and writes: the real process streams, or buffers in a test.
public struct Console: Sendable {
    /// Reads all of standard input.
    public var readInput: @Sendable () -> Data
    /// Whether standard input is a terminal (never read from one unasked).
    public var inputIsTerminal: Bool
    /// Reads one line a person typed at the terminal, without its newline; `nil` at the end.
    public var readLine: @Sendable () -> String?
    /// Whether standard error is a terminal (progress status is shown only there).
    public var errorIsTerminal: Bool
    /// Writes to standard output.
    public var out: @Sendable (String) -> Void
    /// Writes to standard error.
    public var err: @Sendable (String) -> Void
    /// The environment variables.
    public var environment: Environment

    /// Creates a console from its parts.
    public init(
        readInput: @escaping @Sendable () -> Data,
        inputIsTerminal: Bool,
        readLine: @escaping @Sendable () -> String? = { Swift.readLine() },
        errorIsTerminal: Bool = false,
        out: @escaping @Sendable (String) -> Void,
        err: @escaping @Sendable (String) -> Void,
        environment: Environment
    ) {
        self.readInput = readInput
        self.inputIsTerminal = inputIsTerminal
        self.readLine = readLine
        self.errorIsTerminal = errorIsTerminal
        self.out = out
        self.err = err
        self.environment = environment
    }

    /// The process's own standard streams and environment.
    public static var process: Console {
        Console(
            readInput: { (try? PrivateFiles.read(descriptor: STDIN_FILENO, path: "standard input")) ?? Data() },
            inputIsTerminal: isatty(STDIN_FILENO) == 1,
            errorIsTerminal: isatty(STDERR_FILENO) == 1,
            out: { text in write(text, to: STDOUT_FILENO) },
            err: { text in write(text, to: STDERR_FILENO) },
            environment: .process
        )
    }

    /// Writes all of `text` to `descriptor` with write(2), again after a signal interrupts it;
    /// stops at an error (a closed pipe: the reader is gone). What `FileHandle.write` did, without
    /// its generic path, whose types the Swift runtime looked up on the first line written.
    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Writes a line to standard output.
    package func print(_ line: String = "") { out(line + "\n") }
    /// Writes a line to standard error.
    package func printError(_ line: String) { err(line + "\n") }

    /// Asks a yes/no question on the terminal (standard error) and reads the answer; only "y"
    /// or "yes" (any case) is a yes, and the end of input is a no.
    func confirm(_ question: String) -> Bool {
        err(question + " [y/N] ")
        guard let answer = readLine() else {
            err("\n")
            return false
        }
        return ["y", "yes"].contains(answer.trimmingWhitespace().lowercased())
    }
}
