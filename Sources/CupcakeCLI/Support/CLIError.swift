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
    package static func usage(_ message: String, _ command: CommandPath) -> CLIError {
        CLIError(.usage, message, usageOf: command)
    }

    /// A usage error for a value outside an option's choices, with a "did you mean" when one of
    /// them is close: "The value 'choclate' is invalid for '--type <type>': expected …. Did you
    /// mean 'chocolate'?"
    static func invalidValue(
        _ text: String, for option: String, expected: String, choices: [String], _ command: CommandPath
    ) -> CLIError {
        var message = "The value '\(text)' is invalid for '\(option)': expected \(expected)."
        if let suggestion = ArgumentParser.suggestion(for: text.lowercased(), among: choices) {
            message += " Did you mean '\(suggestion)'?"
        }
        return .usage(message, command)
    }

    public var description: String { message }
}

/// Names a command for usage lines: `cupcake orders list`.
public struct CommandPath: Sendable, Equatable {
    /// The words after `cupcake`.
    public var words: [String]

    var fullName: String { (["cupcake"] + words).joined(separator: " ") }
}
