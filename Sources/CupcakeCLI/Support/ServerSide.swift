/// Runs the subcommands whose work needs the server's libraries (libmicrohttpd, SQLite, libpq,
/// OpenSSL): `serve` and `backup`. The `cupcake` client never loads those, so that `price` and
/// `order` start quickly; it hands these commands to the `cupcake-server` executable, which runs
/// them in its own process.
package protocol ServerSide: Sendable {
    /// Runs `command` with its arguments, already parsed once by the client (so a usage error
    /// reads the same from either executable); `words` are all the arguments as given.
    func run(_ command: any CommandSpec.Type, _ arguments: ParsedArguments, words: [String], console: Console)
        async throws(CLIError)
}
