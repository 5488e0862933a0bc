/// `cupcake serve`: the embedded, reqres-compatible order endpoint. What it accepts; the work is
/// done by `cupcake-server` (`ServeCommandBody`), which links the server's libraries.
package enum ServeCommand: CommandSpec {
    package static let path = ["serve"]
    package static let abstract = "Run the order service (reqres-compatible, on SQLite or PostgreSQL)."
    package static let discussion: String? = """
        Settings come from flags, then the environment (CUPCAKE_DATABASE_URL, CUPCAKE_API_KEY,
        CUPCAKE_STAFF_KEY), then the config file (--config, else
        $XDG_CONFIG_HOME/cupcake/server.json when it exists), then the defaults in
        Config/server.json. The app key may place orders and reach one order with
        its receipt token; the staff key may do everything. Without keys the server answers only
        requests addressed to a loopback name, and refuses to listen elsewhere unless
        --insecure-no-keys is given. SIGINT or SIGTERM stops it gracefully.
        """
    package static let options: [OptionSpec] = [
        .value("--host", valueName: "<host>", help: "Address to listen on.", defaultValue: "127.0.0.1"),
        .value("--port", valueName: "<port>", help: "Port to listen on; 0 picks a free one.", defaultValue: "8080"),
        .value(
            "--database", valueName: "<path|url>",
            help: "SQLite file, or postgres://user@host:port/db for PostgreSQL (env CUPCAKE_DATABASE_URL).",
            defaultValue: "$XDG_DATA_HOME/cupcake/orders.sqlite"
        ).completing(.file),
        .value("--api-key", valueName: "<key>", help: "The app's key: place orders, reach one's own order."),
        .value("--api-key-file", valueName: "<path>", help: "Read the app's key from a file (mode 0600).")
            .completing(.file),
        .value("--staff-key", valueName: "<key>", help: "The shop's key: list, read, change any order, backups."),
        .value("--staff-key-file", valueName: "<path>", help: "Read the shop's key from a file (mode 0600).")
            .completing(.file),
        .flag("--insecure-no-keys", help: "Serve without keys on an address other than loopback."),
        .value("--config", valueName: "<path>", help: "Server config file (JSON).").completing(.file),
        .value(
            "--durability", valueName: "<mode>",
            help: "full (fsync every commit before its 201; survives a power loss) or process (survives kill -9 "
                + "only: a power loss can lose answered orders).",
            defaultValue: "full"
        ).completing(.words(["full", "process"])),
        .value("--threads", valueName: "<n>", help: "Worker threads; 0 means one per core.", defaultValue: "0"),
        .flag(
            "--no-pin-threads",
            help: "Do not pin each worker to a core, the commit thread to the first (for shared machines)."),
        .flag("--quiet", help: "Do not log one line per request."),
    ]
}
