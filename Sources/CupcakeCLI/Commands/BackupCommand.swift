/// `cupcake backup --to FILE`: a consistent copy of a running server's database, taken while it
/// keeps taking orders, written atomically with mode 0600. What it accepts; the work is done by
/// `cupcake-server` (`BackupCommandBody`), which checks the copy with SQLite.
package enum BackupCommand: CommandSpec {
    package static let path = ["backup"]
    package static let abstract = "Save a consistent copy of a running server's database."
    package static let discussion: String? = """
        The server makes the copy while it keeps taking orders; it holds every order acknowledged
        before the backup began. The file is checked (SQLite's integrity_check) before it
        replaces FILE. Restore by starting a server on it: cupcake serve --database FILE.
        """
    /// Seconds one attempt may take unless --timeout says otherwise: a big database takes a
    /// while to copy before its first byte is sent.
    package static let defaultTimeout = 600.0
    package static let options: [OptionSpec] =
        [
            .value(
                "--to", valueName: "<file>", help: "Where to write the copy (replaced atomically, mode 0600).",
                required: true
            ).completing(.file)
        ]
        + EndpointOptions.specs.map { spec in
            var spec = spec
            if spec.key == "--timeout" { spec.defaultValue = String(Int(defaultTimeout)) }
            return spec
        }
}
