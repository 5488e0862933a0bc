import Foundation

/// When and how long to wait before trying again: exponential backoff with full jitter (0.5 s
/// base, 5 s cap), or the server's Retry-After when it gives one (at most 60 s).
public struct RetryPolicy: Sendable {
    /// Retries after the first attempt.
    public var retries: Int
    /// The first backoff, in seconds.
    public var base: Double = 0.5
    /// The longest backoff, in seconds.
    public var cap: Double = 5
    /// The longest Retry-After honoured, in seconds.
    public var retryAfterCap: Double = 60

    /// Creates a policy.
    public init(retries: Int) {
        self.retries = retries
    }

    /// Whether an HTTP status is worth retrying: 409, 429 and 5xx.
    public static func isRetryable(status: Int) -> Bool {
        status == 409 || status == 429 || (500...599).contains(status)
    }

    /// The wait before retry number `attempt` (1-based), honouring a Retry-After header.
    public func delay(beforeRetry attempt: Int, retryAfter: String?, random: Double = Double.random(in: 0...1))
        -> Double
    {
        if let retryAfter, let seconds = Self.seconds(retryAfter: retryAfter) {
            return min(max(0, seconds), retryAfterCap)
        }
        let exponential = min(cap, base * pow(2, Double(attempt - 1)))
        // "Equal jitter": at least half the backoff, so retries never bunch up at zero.
        return exponential / 2 + exponential / 2 * random
    }

    /// Retry-After as delta-seconds or an HTTP date.
    static func seconds(retryAfter text: String, now: Date = Date()) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds.isFinite { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return date.timeIntervalSince(now)
    }
}
