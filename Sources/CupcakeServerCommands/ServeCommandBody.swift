import CupcakeCLI
import CupcakeCheckout
import CupcakeDomain
import CupcakeServer
import CupcakeStorage
import Foundation

/// `cupcake serve`'s work: reads the settings, opens the database, serves until SIGINT or SIGTERM.
struct ServeCommandBody: CommandBody {
    var configuration: ServerConfiguration
    var databasePath: String
    /// One line for each key given as a flag (see ``KeyFile``).
    var keyWarnings: [String] = []

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        let environment = console.environment
        var configuration = ServerConfiguration()
        let explicitFile = arguments.value("--config")
        let fileURL = (explicitFile ?? ConfigFiles.userFile(named: "server.json", environment: environment))
            .map { URL(fileURLWithPath: $0) }
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
        if let url = environment.nonEmpty("CUPCAKE_DATABASE_URL") { configuration.database = url }
        if let key = environment.nonEmpty("CUPCAKE_API_KEY") { configuration.apiKey = key }
        if let key = environment.nonEmpty("CUPCAKE_STAFF_KEY") { configuration.staffKey = key }
        if let host = arguments.value("--host") { configuration.host = host }
        if let port = try arguments.integer("--port", in: 0...65535) { configuration.port = port }
        if let database = arguments.value("--database") { configuration.database = database }
        if let key = try EndpointOptions.key(arguments, "--api-key") { configuration.apiKey = key.isEmpty ? nil : key }
        if let key = try EndpointOptions.key(arguments, "--staff-key") {
            configuration.staffKey = key.isEmpty ? nil : key
        }
        keyWarnings = EndpointOptions.keyWarnings(["--api-key", "--staff-key"].filter { arguments.value($0) != nil })
        if arguments.has("--insecure-no-keys") { configuration.insecureNoKeys = true }
        if let threads = try arguments.integer("--threads", in: 0...256) { configuration.threads = threads }
        if let mode = arguments.value("--durability") {
            guard let durability = Durability(rawValue: mode) else {
                throw .usage(
                    "The value '\(mode)' is invalid for '--durability <mode>': expected full or process.",
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
        databasePath = configuration.databasePath { environment[$0] }
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

    func run(console: Console) async throws(CLIError) {
        let shutdown = ShutdownSignal.install()
        for warning in keyWarnings { console.printError(warning) }
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
                + "\(server.durability), \(keysSummary), "
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
