/// `cupcake completion bash|zsh|fish`: prints a completion script for the shell.
struct CompletionCommand: Command {
    static let path = ["completion"]
    static let abstract = "Print a shell completion script (bash, zsh or fish)."
    static let discussion: String? = """
        Load it with 'source <(cupcake completion bash)' in bash, 'source <(cupcake completion
        zsh)' in zsh, or 'cupcake completion fish | source' in fish; the script's first lines say
        where to keep it for good.
        """
    static let arguments = [ArgumentSpec(name: "<shell>", help: "bash, zsh or fish.", values: CommandTree.shells)]
    static let options: [OptionSpec] = []

    var shell: String

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        guard let shell = arguments.positionals.first else {
            throw .usage("Missing expected argument '<shell>'.", arguments.command)
        }
        guard arguments.positionals.count == 1 else {
            throw .usage("Unexpected argument '\(arguments.positionals[1])'.", arguments.command)
        }
        guard CommandTree.shells.contains(shell) else {
            throw .invalidValue(
                shell, for: "<shell>", expected: "bash, zsh or fish", choices: CommandTree.shells, arguments.command)
        }
        self.shell = shell
    }

    func run(console: Console) async throws(CLIError) {
        console.out(CompletionScript.script(for: shell, tree: CommandLineTool.tree) ?? "")
    }
}
