import CupcakeServer
import CupcakeStorage
import Foundation

/// A real order service in this process (real libmicrohttpd, a real database: a SQLite file, or
/// a PostgreSQL database of its own) on a free loopback port; the database is deleted afterwards.
public final class TestServer: @unchecked Sendable {
    // Safe: immutable after init except through shutdown(), called once.
    /// The running service.
    public let server: OrderServer
    /// Holds the SQLite database.
    public let directory: TemporaryDirectory
    /// The database: a SQLite path or a PostgreSQL URL.
    public let databasePath: String
    /// Which engine it runs on.
    public let engine: Engine
    /// The PostgreSQL database, kept until the server is gone.
    private let postgres: PostgresDatabase?

    /// Starts a server; `configure` may change the configuration (port and host are fixed).
    /// Request lines go to `log` when given (none are written otherwise).
    public init(
        engine: Engine = .sqlite, log: AccessLog? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws {
        self.engine = engine
        directory = try TemporaryDirectory()
        switch engine {
        case .sqlite:
            postgres = nil
            databasePath = directory.path("orders.sqlite")
        case .postgres:
            let database = try PostgresFixture.shared.get().newDatabase()
            postgres = database
            databasePath = database.url
        }
        var configuration = ServerConfiguration()
        configure(&configuration)
        configuration.host = "127.0.0.1"
        configuration.port = 0
        server = try OrderServer(
            configuration: configuration, databasePath: databasePath,
            log: log ?? AccessLog(enabled: false, write: { _ in }))
    }

    /// The bound port.
    public var port: Int { server.port }

    /// The order endpoint's URL.
    public var endpoint: String { "http://127.0.0.1:\(port)/api/cupcakes" }

    /// How many orders the database holds, read through another store on the same database.
    public func orderCount() throws -> Int {
        let store = try OrderStores.open(databasePath, options: OrderStores.Options(poolSize: 1))
        defer { store.close() }
        return try store.orderCount()
    }

    /// Stops the server.
    public func shutdown() { server.shutdown() }

    deinit { server.shutdown() }
}
