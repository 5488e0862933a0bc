import Foundation

/// A token bucket per client address: each holds up to `burst` tokens and gains `rate` a
/// second; a request takes one, and with none left it must wait. Buckets are kept while they
/// are below full, then dropped (a full bucket is the same as none), so memory follows the
/// number of recently active clients.
final class TokenBuckets: @unchecked Sendable {
    // Safe: `buckets` and `lastSweep` are only touched while holding `lock`.
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private let lock = NSLock()
    private var buckets: [String: Bucket] = [:]
    private var lastSweep = 0.0
    private let rate: Double
    private let burst: Double
    private let clock: @Sendable () -> Double

    /// - Parameters:
    ///   - rate: tokens gained per second.
    ///   - burst: the most tokens a bucket holds (and starts with).
    ///   - clock: seconds, monotonic.
    init(rate: Double, burst: Int, clock: @escaping @Sendable () -> Double = TokenBuckets.uptime) {
        self.rate = rate
        self.burst = Double(max(1, burst))
        self.clock = clock
    }

    static func uptime() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Takes a token for `client`; nil when it had one, else the seconds until it will.
    func take(_ client: String) -> Double? {
        lock.withLock {
            let now = clock()
            var bucket = refilled(client, now)
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / rate }
            bucket.tokens -= 1
            buckets[client] = bucket
            sweep(now)
            return nil
        }
    }

    /// The seconds until `client` has a token again, or nil when it has one now (takes none).
    func waitingTime(_ client: String) -> Double? {
        lock.withLock {
            let bucket = refilled(client, clock())
            return bucket.tokens >= 1 ? nil : (1 - bucket.tokens) / rate
        }
    }

    private func refilled(_ client: String, _ now: Double) -> Bucket {
        guard var bucket = buckets[client] else { return Bucket(tokens: burst, updated: now) }
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * rate)
        bucket.updated = now
        return bucket
    }

    /// Drops buckets that have filled up again, at most once a second.
    private func sweep(_ now: Double) {
        guard now - lastSweep >= 1 else { return }
        lastSweep = now
        buckets = buckets.filter { min(burst, $0.value.tokens + (now - $0.value.updated) * rate) < burst }
    }
}
