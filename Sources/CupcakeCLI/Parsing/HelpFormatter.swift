/// Renders help in swift-argument-parser's layout: OVERVIEW, USAGE, option sections, SUBCOMMANDS.
enum HelpFormatter {
    /// `cupcake orders show <id> [--json] [<endpoint-options>]`: the required arguments, then
    /// each option of the main section, a section of its own as one `[<section-options>]`, then
    /// the optional arguments.
    static func usageLine(_ command: any CommandSpec.Type) -> String {
        var words = ["cupcake"] + command.path + command.arguments.filter { !$0.optional }.map(\.usage)
        var sections: [String] = []
        for option in command.options {
            if option.section == "OPTIONS" {
                words.append(option.usage)
            } else if !sections.contains(option.section) {
                sections.append(option.section)
                words.append("[<\(option.section.lowercased().replacing(" ", with: "-"))>]")
            }
        }
        words += command.arguments.filter(\.optional).map(\.usage)
        return words.joined(separator: " ")
    }

    static func help(for command: any CommandSpec.Type) -> String {
        var text = "OVERVIEW: \(command.abstract)\n"
        if let discussion = command.discussion {
            text += "\n\(discussion)\n"
        }
        text += "\nUSAGE: \(usageLine(command))\n"
        if !command.arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            text += table(command.arguments.map { ($0.name, $0.help) })
        }
        let options = command.options + [.help]
        var sections: [String] = []
        for option in options where !sections.contains(option.section) {
            sections.append(option.section)
        }
        for section in sections {
            text += "\n\(section):\n"
            text += table(options.filter { $0.section == section }.map(row))
        }
        return text
    }

    static func rootHelp(groups: [(name: String, abstract: String)]) -> String {
        var text = """
            OVERVIEW: Price, place and serve Cupcake Corner orders.

            USAGE: cupcake <subcommand>

            OPTIONS:

            """
        text += table(CommandTree.rootOptions.map(row))
        text += "\nSUBCOMMANDS:\n"
        text += table(groups.map { ($0.name, $0.abstract) })
        text += "\n  See 'cupcake help <subcommand>' for detailed help.\n"
        return text
    }

    static func groupHelp(name: String, abstract: String, commands: [any CommandSpec.Type]) -> String {
        var text = "OVERVIEW: \(abstract)\n\nUSAGE: cupcake \(name) <subcommand>\n\nOPTIONS:\n"
        text += table([("-h, --help", "Show help information.")])
        text += "\nSUBCOMMANDS:\n"
        text += table(commands.map { ($0.path.dropFirst().joined(separator: " "), $0.abstract) })
        text += "\n  See 'cupcake help \(name) <subcommand>' for detailed help.\n"
        return text
    }

    private static func row(_ option: OptionSpec) -> (String, String) {
        var left = option.names.joined(separator: ", ")
        if let valueName = option.valueName { left += " \(valueName)" }
        var right = option.help
        if let defaultValue = option.defaultValue { right += " (default: \(defaultValue))" }
        return (left, right)
    }

    private static func table(_ rows: [(String, String)]) -> String {
        let width = max(24, (rows.map(\.0.count).max() ?? 0) + 4)
        return rows.map { left, right in
            let padding = String(repeating: " ", count: max(1, width - left.count - 2))
            return "  \(left)\(padding)\(right)\n"
        }.joined()
    }
}
