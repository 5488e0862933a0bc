import Foundation

/// How many connections each client address holds, so that one client cannot take every slot
/// under the connection limit (others would wait for its connections to idle out).
///
/// Counted from libmicrohttpd's "started" notification to its "closed" one, the whole life of
/// each connection. A connection that starts over the limit is shut down at once (`SHUT_RDWR`:
/// libmicrohttpd sees the socket end and closes it as it would any the client hung up, and only
/// then frees the descriptor), while the other clients' connections are served as before.
/// Trusted proxies are not limited: every client behind them shares their address.
final class ConnectionsPerClient: @unchecked Sendable {
    // Safe: `counts` is only touched while holding `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private let limit: Int
    private let exempt: Set<String>

    init(limit: Int, exempt: Set<String>) {
        self.limit = max(1, limit)
        self.exempt = exempt
    }

    /// Counts a new connection from `address`; false when it is over the limit (the caller
    /// drops it, and still reports its close).
    func opened(_ address: String) -> Bool {
        lock.withLock {
            let count = counts[address, default: 0] + 1
            counts[address] = count
            return count <= limit || exempt.contains(address)
        }
    }

    /// Forgets a connection from `address`.
    func closed(_ address: String) {
        lock.withLock {
            let count = counts[address, default: 0] - 1
            counts[address] = count > 0 ? count : nil
        }
    }
}
