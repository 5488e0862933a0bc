/// The command line as the completions and the manual page see it: the top-level words, the
/// groups and their subcommands, and each command's options, all from the tables the parser
/// uses.
package struct CommandTree {
    let commands: [any CommandSpec.Type]
    let groups: [(name: String, abstract: String)]

    /// The words after `cupcake` that are not commands of their own.
    static let extraWords: [(name: String, abstract: String)] = [
        ("help", "Show help for a subcommand."),
        ("version", "Show the version."),
    ]

    /// The options `cupcake` itself takes, before any subcommand (its help lists them).
    static let rootOptions: [OptionSpec] = [
        .flag("-V", "--version", help: "Show the version."), .help,
    ]

    /// The names of ``rootOptions``.
    static var rootOptionNames: [String] { rootOptions.flatMap(\.names) }

    /// The shells `cupcake completion` writes for.
    package static let shells = ["bash", "zsh", "fish"]

    /// Every top-level word, with what it does.
    var topLevel: [(name: String, abstract: String)] { groups + Self.extraWords }

    /// The members of a group (`address`, `orders`), by their second word.
    func members(of group: String) -> [any CommandSpec.Type] {
        commands.filter { $0.path.count > 1 && $0.path[0] == group }
    }

    /// The groups that have members.
    var groupNames: [String] {
        groups.map(\.name).filter { !members(of: $0).isEmpty }
    }

    /// Every option of a command, `--help` included.
    package static func options(of command: any CommandSpec.Type) -> [OptionSpec] {
        command.options + [.help]
    }

    /// What a positional argument may be completed with.
    static func argumentWords(of command: any CommandSpec.Type) -> [String] {
        command.arguments.flatMap(\.values)
    }
}
