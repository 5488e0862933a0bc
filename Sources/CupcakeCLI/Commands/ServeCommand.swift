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
        "[--host <host>] [--port <port>] [--database <path>] [--api-key <key>] [--config <path>]"
    static let discussion: String? = """
        Settings come from flags, then the environment (CUPCAKE_API_KEY), then the config file
        (--config, else $XDG_CONFIG_HOME/cupcake/server.json when it exists), then the defaults
        in Config/server.json. SIGINT or SIGTERM stops it gracefully.
        """
    static let options: [OptionSpec] = [
        .value("--host", valueName: "<host>", help: "Address to listen on.", defaultValue: "127.0.0.1"),
        .value("--port", valueName: "<port>", help: "Port to listen on; 0 picks a free one.", defaultValue: "8080"),
        .value(
            "--database", valueName: "<path>", help: "SQLite file.",
            defaultValue: "$XDG_DATA_HOME/cupcake/orders.sqlite"),
        .value("--api-key", valueName: "<key>", help: "Require this key in x-api-key on /api requests."),
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
        if let key = environment["CUPCAKE_API_KEY"], !key.isEmpty { configuration.apiKey = key }
        if let host = arguments.value("--host") { configuration.host = host }
        if let port = try arguments.integer("--port", in: 0...65535) { configuration.port = port }
        if let database = arguments.value("--database") { configuration.database = database }
        if let key = arguments.value("--api-key") { configuration.apiKey = key.isEmpty ? nil : key }
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
        self.configuration = configuration
        databasePath = configuration.databasePath(environment: environment)
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
                + "durability \(configuration.durability.rawValue), api key \(configuration.apiKey == nil ? "off" : "on"), "
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
