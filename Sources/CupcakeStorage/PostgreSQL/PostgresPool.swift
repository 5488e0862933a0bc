import CPostgres
import Foundation

/// A few connections to one PostgreSQL database, lent one at a time.
///
/// A connection that broke (the server restarted, the network dropped) is closed when it comes
/// back and replaced by a new one at the next checkout, so the pool heals by itself once the
/// database is reachable again; until then every checkout fails at once with a temporary error
/// (the server answers 503 with Retry-After). After a failed connect, the next attempt waits a
/// quarter of a second, so a database that is down is not hammered by every request.
final class PostgresPool: @unchecked Sendable {
    // Safe: `idle`, `open`, `closed` and `lastFailure` are only touched while holding
    // `condition`; a connection is used by the one thread that checked it out.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    private var lastFailure: (at: Double, error: StorageError)?
    private let size: Int
    private let conninfo: String
    private let statementTimeoutMilliseconds: Int
    private let waitSeconds: Double

    /// - Parameters:
    ///   - conninfo: a libpq URI or connection string.
    ///   - size: the most connections open at once.
    init(conninfo: String, size: Int, statementTimeoutMilliseconds: Int) {
        self.conninfo = conninfo
        self.size = max(1, size)
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
        waitSeconds = Double(statementTimeoutMilliseconds) / 1000 + 1
    }

    /// Runs `body` with a connection of the pool.
    func withConnection<T>(_ body: (PostgresConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        let connection = try checkOut()
        do {
            let result = try body(connection)
            checkIn(connection)
            return result
        } catch {
            checkIn(connection)
            throw error
        }
    }

    private func checkOut() throws(StorageError) -> PostgresConnection {
        condition.lock()
        let deadline = Date().addingTimeInterval(waitSeconds)
        while idle.isEmpty && open >= size && !closed {
            guard condition.wait(until: deadline) else {
                condition.unlock()
                throw StorageError(.temporary, "no PostgreSQL connection came free in \(Int(waitSeconds)) s")
            }
        }
        if closed {
            condition.unlock()
            throw StorageError(.unavailable, "database is closed")
        }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        let now = Self.uptime()
        if let failure = lastFailure, now - failure.at < 0.25 {
            condition.unlock()
            throw failure.error
        }
        open += 1
        condition.unlock()
        do {
            let connection = try Self.connect(conninfo, statementTimeoutMilliseconds: statementTimeoutMilliseconds)
            condition.withLock { lastFailure = nil }
            return connection
        } catch {
            condition.withLock {
                open -= 1
                lastFailure = (now, error)
                condition.signal()
            }
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        condition.lock()
        defer { condition.unlock() }
        if connection.isHealthy && !closed {
            idle.append(connection)
        } else {
            connection.close()
            open -= 1
        }
        condition.signal()
    }

    /// Opens a connection; libpq's own `connect_timeout` (3 s) unless the URI names one.
    static func connect(_ conninfo: String, statementTimeoutMilliseconds: Int) throws(StorageError)
        -> PostgresConnection
    {
        try PostgresConnection(conninfo: conninfo, statementTimeoutMilliseconds: statementTimeoutMilliseconds)
    }

    /// Closes every idle connection; connections out are closed as they come back.
    func close() {
        condition.lock()
        closed = true
        let connections = idle
        idle.removeAll()
        open -= connections.count
        condition.broadcast()
        condition.unlock()
        connections.forEach { $0.close() }
    }

    static func uptime() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}
