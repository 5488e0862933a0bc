import CupcakeCheckout
import CupcakeDomain
import CupcakeServer
import CupcakeStorage
import Foundation

/// `cupcake serve`: the embedded, reqres-compatible order endpoint.
struct ServeCommand: Command {
    static let path = ["serve"]
    static let abstract = "Run the order service (reqres-compatible, SQLite-backed)."
    static let usageArguments =
        "[--host <host>] [--port <port>] [--database <path|url>] [--api-key <key>] [--staff-key <key>] "
        + "[--insecure-no-keys] [--config <path>] [--durability <mode>] [--threads <n>] [--no-pin-threads] [--quiet]"
    static let discussion: String? = """
        Settings come from flags, then the environment (CUPCAKE_DATABASE_URL, CUPCAKE_API_KEY,
        CUPCAKE_STAFF_KEY), then
        the config file (--config, else $XDG_CONFIG_HOME/cupcake/server.json when it exists), then
        the defaults in Config/server.json. The app key may place orders and reach one order with
        its receipt token; the staff key may do everything. Without keys the server answers only
        requests addressed to a loopback name, and refuses to listen elsewhere unless
        --insecure-no-keys is given. SIGINT or SIGTERM stops it gracefully.
        """
    static let options: [OptionSpec] = [
        .value("--host", valueName: "<host>", help: "Address to listen on.", defaultValue: "127.0.0.1"),
        .value("--port", valueName: "<port>", help: "Port to listen on; 0 picks a free one.", defaultValue: "8080"),
        .value(
            "--database", valueName: "<path|url>",
            help: "SQLite file, or postgres://user@host:port/db for PostgreSQL (env CUPCAKE_DATABASE_URL).",
            defaultValue: "$XDG_DATA_HOME/cupcake/orders.sqlite"),
        .value("--api-key", valueName: "<key>", help: "The app's key: place orders, reach one's own order."),
        .value("--staff-key", valueName: "<key>", help: "The shop's key: list, read, change any order, backups."),
        .flag("--insecure-no-keys", help: "Serve without keys on an address other than loopback."),
        .value("--config", valueName: "<path>", help: "Server config file (JSON)."),
        .value(
            "--durability", valueName: "<mode>",
            help: "process (survives kill -9) or full (fsync every commit, survives power loss).",
            defaultValue: "process"),
        .value("--threads", valueName: "<n>", help: "Worker threads; 0 means one per core.", defaultValue: "0"),
        .flag(
            "--no-pin-threads",
            help: "Do not pin each worker to a core, the commit thread to the first (for shared machines)."),
        .flag("--quiet", help: "Do not log one line per request."),
    ]

    var configuration: ServerConfiguration
    var databasePath: String

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        let environment = console.environment
        var configuration = ServerConfiguration()
        let explicitFile = arguments.value("--config")
        let fileURL: URL? =
            explicitFile.map { URL(fileURLWithPath: $0) }
            ?? ConfigFiles.userFile(named: "server.json", environment: environment)
        if let fileURL {
            let data: Data
            do {
                data = try Data(contentsOf: fileURL)
            } catch {
                throw CLIError(.config, "Cannot read config file \(fileURL.path): \(FileErrorText.reason(error)).")
            }
            do {
                try configuration.apply(fileContents: data)
            } catch {
                throw CLIError(.config, "Config file \(fileURL.path) \(error).")
            }
        }
        if let url = environment["CUPCAKE_DATABASE_URL"], !url.isEmpty { configuration.database = url }
        if let key = environment["CUPCAKE_API_KEY"], !key.isEmpty { configuration.apiKey = key }
        if let key = environment["CUPCAKE_STAFF_KEY"], !key.isEmpty { configuration.staffKey = key }
        if let host = arguments.value("--host") { configuration.host = host }
        if let port = try arguments.integer("--port", in: 0...65535) { configuration.port = port }
        if let database = arguments.value("--database") { configuration.database = database }
        if let key = arguments.value("--api-key") { configuration.apiKey = key.isEmpty ? nil : key }
        if let key = arguments.value("--staff-key") { configuration.staffKey = key.isEmpty ? nil : key }
        if arguments.has("--insecure-no-keys") { configuration.insecureNoKeys = true }
        if let threads = try arguments.integer("--threads", in: 0...256) { configuration.threads = threads }
        if let mode = arguments.value("--durability") {
            guard let durability = Durability(rawValue: mode) else {
                throw .usage(
                    "The value '\(mode)' is invalid for '--durability <mode>': expected process or full.",
                    arguments.command)
            }
            configuration.durability = durability
        }
        if arguments.has("--quiet") { configuration.accessLog = false }
        if arguments.has("--no-pin-threads") { configuration.pinThreads = false }
        if let refusal = configuration.refusal { throw CLIError(.config, refusal) }
        if let staff = configuration.staffKey, staff == configuration.apiKey {
            throw CLIError(
                .config, "The staff key must differ from the app key: the app key ships with every copy of the app.")
        }
        self.configuration = configuration
        databasePath = configuration.databasePath(environment: environment)
    }

    /// The startup line's word on keys.
    var keysSummary: String {
        switch (configuration.apiKey != nil, configuration.staffKey != nil) {
        case (true, true): "app and staff keys"
        case (true, false): "app key only (no staff key: nothing can list orders)"
        case (false, true): "staff key only"
        case (false, false):
            configuration.insecureNoKeys ? "NO KEYS, open to any Host (--insecure-no-keys)" : "no keys (loopback only)"
        }
    }

    /// SQLite's `durability` setting; PostgreSQL answers only after a durable commit.
    private var durabilitySummary: String {
        PostgresOrderStore.isURL(databasePath)
            ? "synchronous_commit on" : "durability \(configuration.durability.rawValue)"
    }

    func run(console: Console) async throws(CLIError) {
        let shutdown = ShutdownSignal.install()
        let log = AccessLog(enabled: configuration.accessLog, write: console.err)
        let server: OrderServer
        do {
            server = try OrderServer(configuration: configuration, databasePath: databasePath, log: log)
        } catch let error as StorageError {
            throw CLIError(.ioError, "Cannot open the database: \(error.message)")
        } catch {
            throw CLIError(.unavailable, "Cannot start the server: \(error)")
        }
        log.notice(
            "cupcake serve \(Cupcake.version): listening on \(server.baseURL) (database \(server.databaseLocation), "
                + "\(durabilitySummary), \(keysSummary), "
                + "\(server.workers) workers\(server.threadsPinned ? " pinned" : ""))"
        )
        log.flush()
        let signal = await shutdown.wait()
        log.notice("cupcake serve: \(signal) received; finishing requests in flight")
        server.shutdown()
        log.notice("cupcake serve: stopped")
        log.flush()
    }
}
