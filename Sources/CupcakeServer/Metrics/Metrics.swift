import Foundation

/// The numbers `GET /metrics` exposes, in Prometheus's text format (version 0.0.4): requests by
/// method, route and status, their durations, orders created, idempotent replays, group-commit
/// batch sizes, storage errors by kind, and connections open.
///
/// Updated on every request, so each update is a short critical section on one lock (two HTTP
/// workers and the commit thread contend, rarely); the exposition is built when asked for.
public final class Metrics: @unchecked Sendable {
    // Safe: every field below is only touched while holding `lock`.
    private let lock = NSLock()
    private var requests: [RequestKey: Int] = [:]
    /// Requests whose answer did not reach the client in full, by the status it would have had.
    private var aborted: [RequestKey: Int] = [:]
    private var durations: [String: Histogram] = [:]
    private var ordersCreated = 0
    private var replays = 0
    private var batches = Histogram(bounds: Metrics.batchBounds)
    private var storageErrors: [String: Int] = [:]
    private var connectionsOpen = 0
    private var connectionsRefused = 0
    /// How long orders stayed in a status before a move through this instance, by that status.
    private var statusDurations: [String: Histogram] = [:]
    private var webhookAttempts: [String: Int] = [:]
    private var webhookLag = Histogram(bounds: Metrics.lagBounds)

    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    /// Cumulative buckets with their upper bounds, a sum and a count.
    struct Histogram {
        let bounds: [Double]
        var counts: [Int]
        var sum = 0.0
        var count = 0

        init(bounds: [Double]) {
            self.bounds = bounds
            counts = Array(repeating: 0, count: bounds.count)
        }

        mutating func observe(_ value: Double) {
            if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
            sum += value
            count += 1
        }
    }

    static let durationBounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    static let batchBounds: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    /// A minute to a day, in seconds.
    static let statusBounds: [Double] = [60, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400]

    /// The methods counted by name; any other is "other".
    private static let methods: Set<String> = ["GET", "HEAD", "POST", "PATCH", "DELETE", "OPTIONS"]

    /// Empty metrics.
    public init() {}

    /// The route a path belongs to (a path's ids would make a series per order).
    static func route(_ path: String) -> String {
        Route.route(at: path)?.route.label ?? "other"
    }

    /// Counts a finished request: answered, or `aborted` (its answer, of `status` if it had one,
    /// did not reach the client in full).
    func request(method: String, path: String, status: Int, seconds: Double, aborted: Bool = false) {
        let method = Self.methods.contains(method) ? method : "other"
        let route = Self.route(path)
        lock.withLock {
            let key = RequestKey(method: method, route: route, status: status)
            if aborted {
                self.aborted[key, default: 0] += 1
            } else {
                requests[key, default: 0] += 1
            }
            durations[route, default: Histogram(bounds: Self.durationBounds)].observe(seconds)
        }
    }

    func orderCreated() { lock.withLock { ordersCreated += 1 } }
    func replayed() { lock.withLock { replays += 1 } }
    func committed(batch size: Int) { lock.withLock { batches.observe(Double(size)) } }
    func storageError(_ kind: String) { lock.withLock { storageErrors[kind, default: 0] += 1 } }
    func connectionOpened() { lock.withLock { connectionsOpen += 1 } }
    func connectionClosed() { lock.withLock { connectionsOpen -= 1 } }
    func connectionRefused() { lock.withLock { connectionsRefused += 1 } }

    /// Counts a status move: the order had been `status` for `seconds`.
    func left(status: String, after seconds: Double) {
        lock.withLock {
            statusDurations[status, default: Histogram(bounds: Self.statusBounds)].observe(max(0, seconds))
        }
    }

    /// Counts a webhook attempt by its outcome (`delivered`, `retry`, `gave_up`), and for a
    /// delivery the time from its event to the receiver's 2xx.
    func webhookAttempt(outcome: String, lagSeconds: Double?) {
        lock.withLock {
            webhookAttempts[outcome, default: 0] += 1
            if let lagSeconds { webhookLag.observe(max(0, lagSeconds)) }
        }
    }

    /// Bounds of the webhook lag histogram, in seconds.
    static let lagBounds: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600]

    /// The exposition, with the orders by status (`orders`, from the database) and the webhook
    /// outbox's backlog (pending deliveries, the oldest's age in seconds) when given.
    public func text(
        ordersByStatus orders: [(status: String, count: Int)] = [],
        webhookBacklog: (pending: Int, oldestSeconds: Double)? = nil
    ) -> String {
        lock.withLock {
            var out = ""
            out += "# HELP cupcake_http_requests_total HTTP requests answered in full, by method, route and status.\n"
            out += "# TYPE cupcake_http_requests_total counter\n"
            for (key, count) in requests.sorted(by: {
                ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
            }) {
                out +=
                    "cupcake_http_requests_total{method=\"\(key.method)\",route=\"\(key.route)\",status=\"\(key.status)\"} \(count)\n"
            }
            out +=
                "# HELP cupcake_http_requests_aborted_total Requests whose answer did not reach the client in full, "
                + "by the status it would have had (0: none yet).\n"
            out += "# TYPE cupcake_http_requests_aborted_total counter\n"
            for (key, count) in aborted.sorted(by: {
                ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
            }) {
                out +=
                    "cupcake_http_requests_aborted_total{method=\"\(key.method)\",route=\"\(key.route)\",status=\"\(key.status)\"} \(count)\n"
            }
            out += "# HELP cupcake_http_request_duration_seconds Time from a request's first byte to its answer.\n"
            out += "# TYPE cupcake_http_request_duration_seconds histogram\n"
            for (route, histogram) in durations.sorted(by: { $0.key < $1.key }) {
                out += Self.lines("cupcake_http_request_duration_seconds", histogram, labels: "route=\"\(route)\"")
            }
            out += "# HELP cupcake_orders_created_total Orders stored and acknowledged with 201.\n"
            out += "# TYPE cupcake_orders_created_total counter\n"
            out += "cupcake_orders_created_total \(ordersCreated)\n"
            out +=
                "# HELP cupcake_idempotent_replays_total Requests answered with an earlier answer for their Idempotency-Key.\n"
            out += "# TYPE cupcake_idempotent_replays_total counter\n"
            out += "cupcake_idempotent_replays_total \(replays)\n"
            out += "# HELP cupcake_commit_batch_orders Orders in each group-commit transaction.\n"
            out += "# TYPE cupcake_commit_batch_orders histogram\n"
            out += Self.lines("cupcake_commit_batch_orders", batches, labels: nil)
            out += "# HELP cupcake_storage_errors_total Storage failures, by kind (temporary ones are answered 503).\n"
            out += "# TYPE cupcake_storage_errors_total counter\n"
            let kinds = Set(["temporary", "unavailable", "conflict", "failed"]).union(storageErrors.keys)
            for kind in kinds.sorted() {
                out += "cupcake_storage_errors_total{kind=\"\(kind)\"} \(storageErrors[kind] ?? 0)\n"
            }
            out += "# HELP cupcake_http_connections_open Connections open now.\n"
            out += "# TYPE cupcake_http_connections_open gauge\n"
            out += "cupcake_http_connections_open \(connectionsOpen)\n"
            out +=
                "# HELP cupcake_http_connections_refused_total Connections closed at once at the per-address limit.\n"
            out += "# TYPE cupcake_http_connections_refused_total counter\n"
            out += "cupcake_http_connections_refused_total \(connectionsRefused)\n"
            if !orders.isEmpty {
                out += "# HELP cupcake_orders Orders in the database, by status.\n"
                out += "# TYPE cupcake_orders gauge\n"
                for (status, count) in orders { out += "cupcake_orders{status=\"\(status)\"} \(count)\n" }
            }
            out +=
                "# HELP cupcake_order_status_seconds How long orders stayed in a status before a move through this "
                + "instance, by that status.\n"
            out += "# TYPE cupcake_order_status_seconds histogram\n"
            for (status, histogram) in statusDurations.sorted(by: { $0.key < $1.key }) {
                out += Self.lines("cupcake_order_status_seconds", histogram, labels: "status=\"\(status)\"")
            }
            out += "# HELP cupcake_webhook_attempts_total Webhook delivery attempts by this instance, by outcome.\n"
            out += "# TYPE cupcake_webhook_attempts_total counter\n"
            for outcome in Set(["delivered", "retry", "gave_up"]).union(webhookAttempts.keys).sorted() {
                out += "cupcake_webhook_attempts_total{outcome=\"\(outcome)\"} \(webhookAttempts[outcome] ?? 0)\n"
            }
            out += "# HELP cupcake_webhook_delivery_lag_seconds Time from an event to its receiver's 2xx.\n"
            out += "# TYPE cupcake_webhook_delivery_lag_seconds histogram\n"
            out += Self.lines("cupcake_webhook_delivery_lag_seconds", webhookLag, labels: nil)
            if let webhookBacklog {
                out += "# HELP cupcake_webhook_backlog Webhook deliveries not made yet.\n"
                out += "# TYPE cupcake_webhook_backlog gauge\n"
                out += "cupcake_webhook_backlog \(webhookBacklog.pending)\n"
                out += "# HELP cupcake_webhook_backlog_oldest_seconds Age of the oldest delivery not made yet.\n"
                out += "# TYPE cupcake_webhook_backlog_oldest_seconds gauge\n"
                out += "cupcake_webhook_backlog_oldest_seconds \(Self.format(webhookBacklog.oldestSeconds))\n"
            }
            return out
        }
    }

    private static func lines(_ name: String, _ histogram: Histogram, labels: String?) -> String {
        let prefix = labels.map { $0 + "," } ?? ""
        var out = ""
        var cumulative = 0
        for (bound, count) in zip(histogram.bounds, histogram.counts) {
            cumulative += count
            out += "\(name)_bucket{\(prefix)le=\"\(format(bound))\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(histogram.count)\n"
        let suffix = labels.map { "{\($0)}" } ?? ""
        out += "\(name)_sum\(suffix) \(format(histogram.sum))\n"
        out += "\(name)_count\(suffix) \(histogram.count)\n"
        return out
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
