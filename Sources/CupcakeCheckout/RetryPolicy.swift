import CCurl
import FoundationEssentials
import Glibc

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

    /// Retry-After as delta-seconds or an HTTP date ("Sun, 06 Nov 1994 08:49:37 GMT", or
    /// RFC 9110's two obsolete forms), read by libcurl's `curl_getdate`. A retry comes after a
    /// request, so libcurl is loaded by then.
    static func seconds(retryAfter text: String, now: Date = Date()) -> Double? {
        let trimmed = text.trimmingWhitespace()
        if let seconds = Double(trimmed), seconds.isFinite { return seconds }
        guard !trimmed.isEmpty, case .success(let api) = CurlLibrary.shared.api else { return nil }
        let time = trimmed.withCString { cupcake_curl_getdate(api, $0) }
        guard time != -1 else { return nil }
        return Double(time) - now.timeIntervalSince1970
    }
}
