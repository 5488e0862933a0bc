import CupcakeDomain

/// The completion scripts `cupcake completion bash|zsh|fish` prints, generated from the same
/// tables the parser uses: the subcommands, every option, and the values some options take (the
/// cake types, the sort keys, the durability modes, file names).
enum CompletionScript {
    static func script(for shell: String, tree: CommandTree) -> String? {
        switch shell {
        case "bash": bash(tree)
        case "zsh": zsh(tree)
        case "fish": fish(tree)
        default: nil
        }
    }

    /// The command path as both shells' scripts spell it: "orders list".
    private static func name(_ command: any CommandSpec.Type) -> String { command.path.joined(separator: " ") }

    private static func words(_ list: [String]) -> String { list.joined(separator: " ") }

    /// Shell code (bash and zsh alike) that sets `command` to the subcommand before the cursor:
    /// the first word, and for a group (`orders`) the second too, stopping at the first option.
    private static func commandLoop(_ tree: CommandTree, words: String, first: Int, current: String) -> String {
        [
            "local command=\"\" i",
            "for ((i = \(first); i < \(current); i++)); do",
            "    case \"${\(words)[i]}\" in -*) break ;; esac",
            "    if [ -z \"$command\" ]; then",
            "        command=\"${\(words)[i]}\"",
            "    else",
            "        case \"$command\" in",
            "            \(tree.groupNames.joined(separator: "|"))) command=\"$command ${\(words)[i]}\" ;;",
            "        esac",
            "        break",
            "    fi",
            "done",
        ].map { "    " + $0 }.joined(separator: "\n").dropFirst(4).description
    }

    /// The `case "$prev" in … esac` of one command (bash and zsh alike): after an option that
    /// takes a value, offer its words, file names, or nothing; `words` and `file` are the
    /// shell's own commands for the first two.
    private static func valueCases(_ options: [OptionSpec], words: ([String]) -> String, file: String) -> String {
        var text = "            case \"$prev\" in\n"
        for option in options where option.takesValue {
            let offer: String
            switch option.completion {
            case .words(let values): offer = words(values) + "; "
            case .file: offer = file + "; "
            case .none: offer = ""
            }
            text += "                \(option.names.joined(separator: "|"))) \(offer)return ;;\n"
        }
        return text + "            esac\n"
    }

    // MARK: bash

    static func bash(_ tree: CommandTree) -> String {
        var text = """
            # bash completion for cupcake \(Cupcake.version), from `cupcake completion bash`.
            # Load it now with: source <(cupcake completion bash)
            # or for good: cupcake completion bash > ~/.local/share/bash-completion/completions/cupcake
            _cupcake() {
                local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
                \(commandLoop(tree, words: "COMP_WORDS", first: 1, current: "COMP_CWORD"))
                case "$command" in
                    "") COMPREPLY=($(compgen -W "\(words(tree.topLevel.map(\.name) + CommandTree.rootOptionNames))" -- "$cur")) ;;
                    help) COMPREPLY=($(compgen -W "\(words(tree.groups.map(\.name)))" -- "$cur")) ;;

            """
        for group in tree.groupNames {
            text +=
                "        \(group)) COMPREPLY=($(compgen -W \"\(words(tree.members(of: group).map { $0.path[1] }))\" -- \"$cur\")) ;;\n"
        }
        for command in tree.commands {
            let options = CommandTree.options(of: command)
            text += "        \"\(name(command))\")\n"
            text += valueCases(
                options, words: { "COMPREPLY=($(compgen -W \"\(words($0))\" -- \"$cur\"))" },
                file: "COMPREPLY=($(compgen -f -- \"$cur\"))")
            let arguments = CommandTree.argumentWords(of: command)
            text +=
                "            COMPREPLY=($(compgen -W \"\(words(options.flatMap(\.names) + arguments))\" -- \"$cur\")) ;;\n"
        }
        text += """
                esac
            }
            complete -F _cupcake cupcake

            """
        return text
    }

    // MARK: zsh

    /// `name:description` for `_describe`, with the colons in the name escaped.
    private static func described(_ name: String, _ abstract: String) -> String {
        "'" + name.replacing(":", with: "\\:") + ":" + quoted(abstract) + "'"
    }

    /// Text inside single quotes.
    private static func quoted(_ text: String) -> String { text.replacing("'", with: "'\\''") }

    /// The top-level words and `cupcake`'s own options, described, for `_describe`.
    private static func rootChoices(_ tree: CommandTree) -> [String] {
        tree.topLevel.map { described($0.name, $0.abstract) }
            + CommandTree.rootOptions.flatMap { option in option.names.map { described($0, option.help) } }
    }

    static func zsh(_ tree: CommandTree) -> String {
        var text = """
            #compdef cupcake
            # zsh completion for cupcake \(Cupcake.version), from `cupcake completion zsh`.
            # Load it now with: source <(cupcake completion zsh)
            # or for good: cupcake completion zsh > "${fpath[1]}/_cupcake"
            _cupcake() {
                local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}"
                \(commandLoop(tree, words: "words", first: 2, current: "CURRENT"))
                local -a choices
                case "$command" in
                    "")
                        choices=(\(rootChoices(tree).joined(separator: " ")))
                        _describe 'subcommand' choices ;;
                    help) compadd -- \(words(tree.groups.map(\.name))) ;;

            """
        for group in tree.groupNames {
            let members = tree.members(of: group).map { described($0.path[1], $0.abstract) }
            text += "        \(group))\n            choices=(\(members.joined(separator: " ")))\n"
            text += "            _describe 'subcommand' choices ;;\n"
        }
        for command in tree.commands {
            let options = CommandTree.options(of: command)
            text += "        \"\(name(command))\")\n"
            text += valueCases(options, words: { "compadd -- \(words($0))" }, file: "_files")
            let pairs = options.flatMap { option in option.names.map { Self.described($0, option.help) } }
            text += "            choices=(\(pairs.joined(separator: " ")))\n"
            text += "            _describe 'option' choices"
            let arguments = CommandTree.argumentWords(of: command)
            text += arguments.isEmpty ? " ;;\n" : "\n            compadd -- \(words(arguments)) ;;\n"
        }
        text += """
                esac
            }
            if [[ "$funcstack[1]" == "_cupcake" ]]; then
                _cupcake "$@"
            else
                compdef _cupcake cupcake
            fi

            """
        return text
    }

    // MARK: fish

    static func fish(_ tree: CommandTree) -> String {
        var lines = [
            "# fish completion for cupcake \(Cupcake.version), from `cupcake completion fish`.",
            "# Load it now with: cupcake completion fish | source",
            "# or for good: cupcake completion fish > ~/.config/fish/completions/cupcake.fish",
            "complete -c cupcake -f",
        ]
        for (word, abstract) in tree.topLevel {
            lines.append("complete -c cupcake -n __fish_use_subcommand -a \(word) -d '\(quoted(abstract))'")
        }
        for option in CommandTree.rootOptions {
            let names = option.names.map { $0.hasPrefix("--") ? "-l \($0.dropFirst(2))" : "-s \($0.dropFirst())" }
            lines.append(
                "complete -c cupcake -n __fish_use_subcommand \(names.joined(separator: " ")) -d '\(quoted(option.help))'"
            )
        }
        let groups = tree.groups.map(\.name).joined(separator: " ")
        lines.append("complete -c cupcake -n '__fish_seen_subcommand_from help' -a '\(groups)'")
        for group in tree.groupNames {
            let members = tree.members(of: group)
            let memberWords = members.map { $0.path[1] }.joined(separator: " ")
            for member in members {
                lines.append(
                    "complete -c cupcake -n '__fish_seen_subcommand_from \(group); and not __fish_seen_subcommand_from "
                        + "\(memberWords)' -a \(member.path[1]) -d '\(quoted(member.abstract))'")
            }
        }
        for command in tree.commands {
            let condition = command.path.map { "__fish_seen_subcommand_from \($0)" }.joined(separator: "; and ")
            for option in CommandTree.options(of: command) {
                var line = "complete -c cupcake -n '\(condition)'"
                for name in option.names {
                    line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())"
                }
                switch (option.takesValue, option.completion) {
                case (false, _): break
                case (true, .words(let values)): line += " -x -a '\(values.joined(separator: " "))'"
                case (true, .file): line += " -r -F"
                case (true, .none): line += " -x"
                }
                lines.append(line + " -d '\(quoted(option.help))'")
            }
            let arguments = CommandTree.argumentWords(of: command)
            if !arguments.isEmpty {
                lines.append("complete -c cupcake -n '\(condition)' -a '\(arguments.joined(separator: " "))'")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
