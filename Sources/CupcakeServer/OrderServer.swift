import CupcakeStorage
import Foundation

/// A running order service: the store, the group-commit writer, the API and the HTTP server,
/// started together and stopped in the right order.
public final class OrderServer: @unchecked Sendable {
    // Safe: every property is set in init and only read afterwards; shutdown() is idempotent
    // and called from one thread.
    private let http: HTTPServer
    private let store: any OrderStore
    private let committer: GroupCommitter
    private let purge: any DispatchSourceTimer
    private let limitsSummary: any DispatchSourceTimer
    private let events: EventHub
    private let webhooks: WebhookDispatcher
    /// Where the service listens, e.g. `http://127.0.0.1:8080`.
    public let baseURL: String
    /// The port bound.
    public var port: Int { http.port }
    /// Where the data is.
    public var databaseLocation: String { store.location }
    /// What an acknowledged order survives, in words.
    public var durability: String { store.durability }
    /// How many HTTP workers serve requests.
    public var workers: Int { http.limits.workerThreads }
    /// Whether the workers and the commit thread are pinned to CPUs (see `pinThreads`).
    public var threadsPinned: Bool { http.workersPinned }

    /// Opens the database and starts listening.
    ///
    /// - Parameter databasePath: a SQLite file, or a PostgreSQL URL (`postgres://…`,
    ///   `postgresql://…`) for an instance among several over one database.
    /// - Throws: ``StorageError`` or ``ServerError``.
    public init(configuration: ServerConfiguration, databasePath: String, log: AccessLog) throws {
        var limits = HTTPServer.Limits()
        limits.threads = configuration.threads
        let store = try OrderStores.open(
            databasePath,
            options: OrderStores.Options(
                durability: configuration.durability, poolSize: configuration.databasePoolSize,
                workers: limits.workerThreads))
        limits.bodyBytes = configuration.bodyLimitBytes
        limits.connections = configuration.connectionLimit
        limits.idleTimeoutSeconds = configuration.idleTimeoutSeconds
        limits.requestTimeoutSeconds = configuration.requestTimeoutSeconds
        limits.connectionsPerClient = configuration.connectionsPerClient
        limits.trustedProxies = Set(configuration.trustedProxies)
        let placement =
            configuration.pinThreads
            ? ThreadPlacement(workers: limits.workerThreads, allowed: ThreadPlacement.allowedCPUs()) : nil
        let metrics = Metrics()
        let committer = GroupCommitter(
            store: store,
            threadStarted: {
                if let cpu = placement?.commitCPU { ThreadPlacement.pin(thread: 0, to: cpu) }
            }, committed: { metrics.committed(batch: $0) })
        let events = EventHub(
            store: store,
            heartbeatSeconds: min(
                configuration.eventHeartbeatSeconds, Double(max(1, configuration.idleTimeoutSeconds - 1))))
        let now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
        let webhooks = WebhookDispatcher(
            store: store, settings: configuration.webhooks, metrics: metrics, log: log, now: now)
        let api = OrderAPI(
            store: store, committer: committer, access: configuration.access, log: log, now: now, metrics: metrics,
            events: events, webhooks: webhooks, webhookSettings: configuration.webhooks)
        api.backups?.removeLeftovers()
        let http = HTTPServer(
            host: configuration.host, port: configuration.port, limits: limits, handler: api, log: log,
            metrics: metrics)
        http.placement = placement
        do {
            try http.start()
            events.start()
            webhooks.start()
        } catch {
            committer.shutdown()
            store.close()
            throw error
        }
        // Idempotency keys live at least 24 hours: forget them after 48, at start and hourly.
        // (Created only now: libdispatch traps if a timer is released without being resumed.)
        let purge = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        purge.schedule(deadline: .now(), repeating: .seconds(3600), leeway: .seconds(60))
        purge.setEventHandler { [store] in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            _ = try? store.purgeIdempotencyKeys(recordedBefore: now - 48 * 3_600_000)
        }
        purge.resume()
        self.purge = purge
        // What the abuse limits turned away, in one line every 10 s when anything was.
        let limitsSummary = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        limitsSummary.schedule(deadline: .now() + .seconds(10), repeating: .seconds(10), leeway: .seconds(1))
        limitsSummary.setEventHandler { [log] in log.summarizeLimits() }
        limitsSummary.resume()
        self.limitsSummary = limitsSummary
        self.store = store
        self.committer = committer
        self.http = http
        self.events = events
        self.webhooks = webhooks
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        baseURL = "http://\(host):\(http.port)"
    }

    /// Stops accepting, finishes requests in flight, commits what is queued, closes the database.
    public func shutdown() {
        purge.cancel()
        limitsSummary.cancel()
        // Streams end first: a suspended connection would otherwise hold the daemon's stop.
        events.stop()
        http.shutdown()
        // After the last request (none can add work), before the database closes.
        webhooks.stop()
        committer.shutdown()
        store.close()
    }
}
