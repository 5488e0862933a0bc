import CupcakeCLI

/// `serve` and `backup` run in this process: what the `cupcake-server` executable (and the tests)
/// use.
package struct InProcessServerSide: ServerSide {
    package init() {}

    package func run(_ command: any CommandSpec.Type, _ arguments: ParsedArguments, words: [String], console: Console)
        async throws(CLIError)
    {
        let body: any CommandBody.Type
        switch command.path {
        case ServeCommand.path: body = ServeCommandBody.self
        case BackupCommand.path: body = BackupCommandBody.self
        default: throw CLIError(.unavailable, "No server-side work for '\(command.path.joined(separator: " "))'.")
        }
        try await body.init(arguments, console: console).run(console: console)
    }
}
