/// A `cupcake` subcommand: its name, help and options, how it checks its arguments, and what it
/// does. Parse, then validate (`init`), then run; each step is testable alone.
protocol Command: Sendable {
    /// The words after `cupcake` that select it: `["orders", "list"]`.
    static var path: [String] { get }
    /// One line saying what it does.
    static var abstract: String { get }
    /// The arguments part of the usage line: `[<order-options>] [--json] [-]`.
    static var usageArguments: String { get }
    /// Longer help, if any.
    static var discussion: String? { get }
    /// Every option it accepts (help is added for it).
    static var options: [OptionSpec] { get }

    /// Checks the parsed arguments.
    init(_ arguments: ParsedArguments, console: Console) throws(CLIError)

    /// Does the work, writing to the console.
    func run(console: Console) async throws(CLIError)
}

extension Command {
    static var discussion: String? { nil }
    static var commandPath: CommandPath { CommandPath(words: path) }
}
