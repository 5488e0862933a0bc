/// A failure the CLI reports: one message, and the exit code that goes with it.
///
/// A usage error also names the command, so the report can add its usage line and the pointer
/// to its help, as swift-argument-parser does.
public struct CLIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The exit code.
    public var code: ExitCode
    /// The message, without the "Error: " prefix.
    public var message: String
    /// For usage errors, the command whose usage to show.
    public var usageOf: CommandPath?

    /// Creates an error with an exit code and a message.
    public init(_ code: ExitCode, _ message: String, usageOf: CommandPath? = nil) {
        self.code = code
        self.message = message
        self.usageOf = usageOf
    }

    /// A usage error (64) for a command.
    static func usage(_ message: String, _ command: CommandPath) -> CLIError {
        CLIError(.usage, message, usageOf: command)
    }

    public var description: String { message }
}

/// Names a command for usage lines: `cupcake orders list`.
public struct CommandPath: Sendable, Equatable {
    /// The words after `cupcake`.
    public var words: [String]

    var fullName: String { (["cupcake"] + words).joined(separator: " ") }
}
