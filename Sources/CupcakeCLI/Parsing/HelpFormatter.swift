/// Renders help in swift-argument-parser's layout: OVERVIEW, USAGE, option sections, SUBCOMMANDS.
enum HelpFormatter {
    static func usageLine(_ command: any Command.Type) -> String {
        "cupcake \(command.path.joined(separator: " ")) \(command.usageArguments)"
            .trimmingCharacters(in: .whitespaces)
    }

    static func help(for command: any Command.Type) -> String {
        var text = "OVERVIEW: \(command.abstract)\n"
        if let discussion = command.discussion {
            text += "\n\(discussion)\n"
        }
        text += "\nUSAGE: \(usageLine(command))\n"
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
        text += table([
            ("--version", "Show the version."),
            ("-h, --help", "Show help information."),
        ])
        text += "\nSUBCOMMANDS:\n"
        text += table(groups.map { ($0.name, $0.abstract) })
        text += "\n  See 'cupcake help <subcommand>' for detailed help.\n"
        return text
    }

    static func groupHelp(name: String, abstract: String, commands: [any Command.Type]) -> String {
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
