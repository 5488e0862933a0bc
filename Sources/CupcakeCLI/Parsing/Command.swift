/// What `--help`, the completions and the manual page know of a `cupcake` subcommand: its name,
/// help, options and positional arguments. The usage line is made from these, so it cannot
/// disagree with them.
package protocol CommandSpec: Sendable {
    /// The words after `cupcake` that select it: `["orders", "list"]`.
    static var path: [String] { get }
    /// One line saying what it does.
    static var abstract: String { get }
    /// Longer help, if any.
    static var discussion: String? { get }
    /// Every option it accepts (help is added for it).
    static var options: [OptionSpec] { get }
    /// Its positional arguments, in order.
    static var arguments: [ArgumentSpec] { get }
    /// What runs it in this executable: itself when it is a ``CommandBody``, else `nil` (`serve`
    /// and `backup`, which `cupcake-server` runs). Chosen when the type is compiled, so the
    /// runtime has no conformance to look up.
    static var body: (any CommandBody.Type)? { get }
}

/// How a subcommand checks its arguments and does its work. Parse, then validate (`init`), then
/// run; each step is testable alone.
package protocol CommandBody: Sendable {
    /// Checks the parsed arguments.
    init(_ arguments: ParsedArguments, console: Console) throws(CLIError)

    /// Does the work, writing to the console.
    func run(console: Console) async throws(CLIError)
}

/// A subcommand this executable runs itself.
package typealias Command = CommandSpec & CommandBody

extension CommandSpec {
    package static var body: (any CommandBody.Type)? { nil }
    package static var discussion: String? { nil }
    package static var arguments: [ArgumentSpec] { [] }
    static var commandPath: CommandPath { CommandPath(words: path) }
}

extension CommandSpec where Self: CommandBody {
    package static var body: (any CommandBody.Type)? { self }
}
