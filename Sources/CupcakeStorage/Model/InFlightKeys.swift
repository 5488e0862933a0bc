import Foundation

/// The Idempotency-Keys whose first request is still being handled, in this process: the
/// SQLite engine's claims (one process holds its database). A second request with one of them
/// gets 409 until the first finishes (and its answer is stored for replay).
final class InFlightKeys: @unchecked Sendable {
    // Safe: `keys` is only touched while holding `lock`.
    private let lock = NSLock()
    private var keys: Set<String> = []

    /// Claims a key; `false` when another request holds it.
    func begin(_ key: String) -> Bool {
        lock.withLock { keys.insert(key).inserted }
    }

    /// Releases a key.
    func end(_ key: String) {
        _ = lock.withLock { keys.remove(key) }
    }
}
