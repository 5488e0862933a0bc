import CupcakeServer
import CupcakeStorage
import Foundation

/// A real order service in this process (real libmicrohttpd, real SQLite file) on a free
/// loopback port, with a temporary database that is deleted afterwards.
public final class TestServer: @unchecked Sendable {
    // Safe: immutable after init except through shutdown(), called once.
    /// The running service.
    public let server: OrderServer
    /// Holds the database.
    public let directory: TemporaryDirectory
    /// The database path.
    public let databasePath: String

    /// Starts a server; `configure` may change the configuration (port and host are fixed).
    public init(configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        directory = try TemporaryDirectory()
        databasePath = directory.path("orders.sqlite")
        var configuration = ServerConfiguration()
        configure(&configuration)
        configuration.host = "127.0.0.1"
        configuration.port = 0
        server = try OrderServer(
            configuration: configuration, databasePath: databasePath, log: AccessLog(enabled: false, write: { _ in }))
    }

    /// The bound port.
    public var port: Int { server.port }

    /// The order endpoint's URL.
    public var endpoint: String { "http://127.0.0.1:\(port)/api/cupcakes" }

    /// How many orders the database holds, read through a second connection to the same file.
    public func orderCount() throws -> Int {
        let store = try SQLiteOrderStore(path: databasePath)
        defer { store.close() }
        return try store.orderCount()
    }

    /// Stops the server.
    public func shutdown() { server.shutdown() }

    deinit { server.shutdown() }
}
