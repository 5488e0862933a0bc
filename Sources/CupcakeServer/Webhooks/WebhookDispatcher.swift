import CMicroHTTPD
import CupcakeCheckout
import CupcakeDomain
import CupcakeStorage
import Foundation

/// Delivers the event log to webhook endpoints, at least once, in each order's order.
///
/// One loop thread, every ``pollSeconds`` or when nudged:
/// 1. records the attempts its delivery threads finished (one transaction);
/// 2. reads the log after the outbox cursor and adds a delivery per event and subscribed
///    endpoint, moving the cursor in the same transaction (the log is the outbox: each event
///    was written in its change's transaction, so none is missed, and a cursor moved by
///    another instance first makes this one add nothing);
/// 3. claims due deliveries (each the earliest undelivered of its order for its endpoint) with
///    a lease longer than an attempt can take, and hands them to the delivery threads.
///
/// A delivery is done only on a 2xx. Anything else is retried on ``retrySchedule`` (scaled by
/// ``WebhookSettings/retryScale``, with ±20% jitter) and, after its last step, failed; an
/// endpoint failing for ``WebhookSettings/disableAfterSeconds`` is disabled, and a 410 disables
/// it at once. The delivery threads have their own libcurl connections and the store's own
/// connections, so a slow receiver never holds up an order.
///
/// A kill between a receiver's 2xx and the record of it sends that delivery again once its
/// lease ends, with the same `webhook-id`: receivers drop what they have seen.
public final class WebhookDispatcher: @unchecked Sendable {
    // Safe: `queue`, `finished`, `inFlight` and `running` are only touched while holding `lock`.
    private let lock = NSLock()
    private let store: any OrderStore
    private let settings: WebhookSettings
    private let metrics: Metrics
    private let log: AccessLog
    private let now: @Sendable () -> Int64
    /// Claimed deliveries waiting for a delivery thread, with their lease's end.
    private var queue: [(delivery: WebhookDelivery, leaseUntil: Int64)] = []
    private var finished: [WebhookResult] = []
    private var inFlight = 0
    private var running = false
    private let wake = DispatchSemaphore(value: 0)
    private let work = DispatchSemaphore(value: 0)
    private let stopped = DispatchGroup()
    /// This instance, as the owner of its leases.
    let owner: String
    /// How often the log and the due deliveries are looked at when nothing nudges.
    let pollSeconds: Double
    /// The most events read from the log at once.
    static let batch = 500

    /// The waits after each failed attempt, in seconds, as the Standard Webhooks guidance
    /// describes: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; an eighth failure fails the delivery
    /// (about 28 hours after the event).
    static let retrySchedule: [Double] = [5, 300, 1800, 7200, 18000, 36000, 36000]

    init(
        store: any OrderStore, settings: WebhookSettings, metrics: Metrics, log: AccessLog,
        now: @escaping @Sendable () -> Int64, pollSeconds: Double = 0.1
    ) {
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.log = log
        self.now = now
        self.pollSeconds = pollSeconds
        var random = SystemRandomNumberGenerator()
        owner = "\(ProcessInfo.processInfo.hostName)-\(getpid())-\(UInt32.random(in: .min ... .max, using: &random))"
    }

    /// Starts the loop and the delivery threads.
    func start() {
        lock.withLock { running = true }
        stopped.enter()
        let loop = Thread { [self] in
            // At the normal priority: this thread takes the database's writer (SQLite has one) for
            // the outbox's transactions, and a holder starved of CPU would hold up the commits of
            // orders behind it.
            pthread_setname_np(pthread_self(), "cupcake-outbox")
            run()
            stopped.leave()
        }
        loop.name = "cupcake-webhooks"
        loop.start()
        for index in 0..<settings.workers {
            stopped.enter()
            let poster = WebhookPoster(
                allowPrivateAddresses: settings.allowPrivateAddresses,
                connectTimeout: Double(settings.connectTimeoutSeconds), timeout: Double(settings.timeoutSeconds))
            let thread = Thread { [self] in
                Self.runInBackground(named: "cupcake-hook-\(index)")
                deliverLoop(poster)
                stopped.leave()
            }
            thread.name = "cupcake-webhook-\(index)"
            thread.start()
        }
    }

    /// Stops claiming, lets attempts in flight end for up to `grace` seconds and records them.
    /// (One still running after that is sent again by whoever next claims it, its lease ended.)
    func stop(grace: Double = 2) {
        guard
            lock.withLock({ () -> Bool in
                guard running else { return false }
                running = false
                queue.removeAll()
                return true
            })
        else { return }
        wake.signal()
        for _ in 0..<settings.workers { work.signal() }
        _ = stopped.wait(timeout: .now() + grace)
    }

    /// Names the calling delivery thread (for `top -H` and /proc) and lowers its CPU priority to
    /// nice 10.
    ///
    /// An HTTP exchange with a receiver costs more CPU than placing the order did, so on a
    /// saturated machine deliveries would take CPU from the workers answering orders. At nice 10
    /// these threads get what the order path leaves: a surge is answered at full speed and its
    /// deliveries follow after. They hold no lock the order path waits for (the database work is
    /// the loop thread's, at the normal priority). Only scheduling changes: every attempt is
    /// still bounded by libcurl's wall-clock timeouts, a delivery is started only while its lease
    /// has room for a whole attempt, and one recorded after its lease ended is at worst sent
    /// again under the same `webhook-id` (see docs/RELIABILITY.md).
    private static func runInBackground(named name: String) {
        pthread_setname_np(pthread_self(), name)
        _ = cupcake_set_thread_nice(10)
    }

    /// Looks at the log and the due deliveries now: a change was just made here.
    func nudge() { wake.signal() }

    private func run() {
        while lock.withLock({ running }) {
            cycle()
            _ = wake.wait(timeout: .now() + pollSeconds)
        }
        record()
    }

    /// One pass: record, add, claim. A storage failure is logged and the pass tried again at the
    /// next poll (nothing is lost: the cursor and the deliveries did not move).
    private func cycle() {
        record()
        do {
            // The endpoints, read once for the pass: whom to add deliveries for, and where to send.
            let endpoints = try store.webhookEndpoints()
            try fanOut(endpoints)
            try claim(endpoints)
        } catch {
            log.notice("webhooks: \(error)")
        }
    }

    private func record() {
        let results = lock.withLock { () -> [WebhookResult] in
            defer { finished.removeAll() }
            return finished
        }
        guard !results.isEmpty else { return }
        do {
            try store.recordWebhookResults(results)
        } catch {
            log.notice("webhooks: recording \(results.count) attempts: \(error)")
            // Kept for the next pass; their leases keep the deliveries from being sent again
            // meanwhile.
            lock.withLock { finished = results + finished }
        }
    }

    /// Adds deliveries for the events after the cursor.
    private func fanOut(_ all: [WebhookEndpoint]) throws {
        // No endpoint at all: nothing to read (the first one made moves the cursor to the log's
        // end, see ``moveCursorToEnd()``). Only disabled ones: the cursor moves on, adding
        // nothing; a disabled endpoint misses what happens meanwhile.
        guard !all.isEmpty else { return }
        let endpoints = all.filter(\.enabled)
        var from = try store.webhookCursor()
        while true {
            let events = try store.events(after: from ?? .start, orderID: nil, limit: Self.batch)
            guard let last = events.last else { return }
            var deliveries: [NewWebhookDelivery] = []
            var orders: [Int64: StoredOrder?] = [:]
            for event in events {
                let type = WebhookEvent.type(of: event.change.status)
                let receivers = endpoints.filter {
                    $0.receives(type) && $0.createdAtMilliseconds <= event.change.atMilliseconds
                }
                guard !receivers.isEmpty else { continue }
                if orders[event.orderID] == nil {
                    orders[event.orderID] = .some(try store.order(id: event.orderID, history: true))
                }
                let body = WebhookEvent.payload(event, order: orders[event.orderID] ?? nil)
                for endpoint in receivers {
                    deliveries.append(
                        NewWebhookDelivery(
                            endpointID: endpoint.id, eventID: event.position.id, orderID: event.orderID, type: type,
                            body: body))
                }
            }
            guard try store.enqueueWebhookDeliveries(deliveries, from: from, to: last.position, nowMilliseconds: now())
            else { return }  // another instance added them
            from = last.position
            if events.count < Self.batch { return }
        }
    }

    /// Moves the outbox cursor to the log's end, before the first endpoint is made: it then
    /// receives what happens from its creation on, and the past is not read.
    func moveCursorToEnd() throws(StorageError) {
        let cursor = try store.webhookCursor()
        let end = try store.latestEventPosition()
        if let cursor, cursor >= end { return }
        _ = try store.enqueueWebhookDeliveries([], from: cursor, to: end, nowMilliseconds: now())
    }

    /// The longest one attempt can take: libcurl's whole-exchange timeout bounds it.
    private var attemptMilliseconds: Int64 { Int64(settings.timeoutSeconds + settings.connectTimeoutSeconds) * 1000 }

    /// The most deliveries claimed and waiting at once (a batch per pass keeps up with a busy
    /// shop; each pass costs a few transactions whatever its size).
    static let queueLimit = 256

    /// Claims what the delivery threads can take and queues it.
    private func claim(_ endpoints: [WebhookEndpoint]) throws {
        let room = lock.withLock { Self.queueLimit - queue.count - inFlight }
        guard room > 0 else { return }
        let time = now()
        // Four times the longest attempt: a delivery waits in the queue behind others, then its
        // attempt must end before the lease does. A delivery thread drops one whose lease has
        // no room left for a whole attempt (it is claimed again once the lease ends), so no
        // delivery is ever sent while another instance may hold it; a killed instance's
        // deliveries pass on once their leases run out.
        let claimed = try store.claimWebhookDeliveries(
            owner: owner, nowMilliseconds: time, leaseUntilMilliseconds: time + 4 * attemptMilliseconds, limit: room)
        guard !claimed.isEmpty else { return }
        let byID = Dictionary(uniqueKeysWithValues: endpoints.map { ($0.id, $0) })
        lock.withLock {
            queue += claimed.map { ($0, time + 4 * attemptMilliseconds) }
            self.endpoints = byID
        }
        for _ in claimed { work.signal() }
    }

    // Safe: written under `lock` by the loop, read under `lock` by the delivery threads.
    private var endpoints: [Int64: WebhookEndpoint] = [:]

    private func deliverLoop(_ poster: WebhookPoster) {
        while true {
            work.wait()
            let next = lock.withLock { () -> (WebhookDelivery, WebhookEndpoint?)? in
                while running, !queue.isEmpty {
                    let (delivery, leaseUntil) = queue.removeFirst()
                    // Too late to finish before the lease ends: left for a later claim.
                    guard now() + attemptMilliseconds < leaseUntil else { continue }
                    inFlight += 1
                    return (delivery, endpoints[delivery.endpointID])
                }
                return nil
            }
            guard let (delivery, endpoint) = next else {
                if lock.withLock({ !running }) { return }
                continue
            }
            let result = attempt(delivery, endpoint: endpoint, poster: poster)
            let starving = lock.withLock { () -> Bool in
                inFlight -= 1
                finished.append(result)
                return queue.isEmpty
            }
            // The loop records and claims at its next poll; sooner when there is nothing
            // left to send (an order's next event waits for this one's record).
            if starving { wake.signal() }
        }
    }

    /// One attempt, and its consequence.
    private func attempt(_ delivery: WebhookDelivery, endpoint: WebhookEndpoint?, poster: WebhookPoster)
        -> WebhookResult
    {
        let started = now()
        let outcome: WebhookPoster.Outcome
        if let endpoint {
            let timestamp = started / 1000
            let id = WebhookEvent.id(delivery.eventID)
            outcome = poster.post(
                url: endpoint.url,
                headers: [
                    ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
                    (
                        "webhook-signature",
                        WebhookSignature.header(
                            id: id, timestamp: timestamp, body: delivery.body,
                            secrets: endpoint.signingSecrets(nowMilliseconds: started))
                    ),
                ], body: delivery.body)
        } else {
            outcome = WebhookPoster.Outcome(status: 0, error: "the endpoint is gone")
        }
        let ended = now()
        let success = (200...299).contains(outcome.status)
        let attempt = WebhookAttempt(
            deliveryID: delivery.id, endpointID: delivery.endpointID, eventID: delivery.eventID,
            atMilliseconds: started, status: outcome.status, durationMilliseconds: max(0, ended - started),
            error: success ? nil : outcome.error ?? "HTTP \(outcome.status)")
        if success {
            let eventTime = Self.eventTime(delivery.body)
            metrics.webhookAttempt(outcome: "delivered", lagSeconds: eventTime.map { Double(ended - $0) / 1000 })
            return WebhookResult(
                attempt: attempt, outcome: .delivered,
                endpointChange: endpoint?.failingSinceMilliseconds != nil ? .failing(sinceMilliseconds: nil) : nil)
        }
        var change: WebhookEndpointChange? = .failing(sinceMilliseconds: started)
        if outcome.status == 410 {
            change = .enabled(false, reason: "the receiver answered 410 Gone")
        } else if let since = endpoint?.failingSinceMilliseconds,
            ended - since >= Int64(settings.disableAfterSeconds) * 1000
        {
            change = .enabled(false, reason: "every attempt failed for \(settings.disableAfterSeconds) s")
        }
        if case .enabled = change, let endpoint {
            log.notice("webhooks: endpoint \(endpoint.id) (\(endpoint.url)) disabled: \(attempt.error ?? "")")
        }
        let step = delivery.attempts  // failures before this one
        guard step < Self.retrySchedule.count else {
            metrics.webhookAttempt(outcome: "gave_up", lagSeconds: nil)
            return WebhookResult(attempt: attempt, outcome: .gaveUp, endpointChange: change)
        }
        var random = SystemRandomNumberGenerator()
        let jitter = Double.random(in: 0.8...1.2, using: &random)
        let wait = Int64(Self.retrySchedule[step] * settings.retryScale * jitter * 1000)
        metrics.webhookAttempt(outcome: "retry", lagSeconds: nil)
        return WebhookResult(
            attempt: attempt, outcome: .retry(atMilliseconds: ended + max(1, wait)), endpointChange: change)
    }

    /// The event's time, from the payload's `timestamp` (for the lag metric): the text after the
    /// first `"timestamp":"`, which ``WebhookEvent`` writes second, after the type; no JSON is
    /// parsed on a delivery thread for a metric.
    static func eventTime(_ body: String) -> Int64? {
        let utf8 = Array(body.utf8.prefix(128))
        let key = Array(#""timestamp":""#.utf8)
        guard utf8.count > key.count,
            let start = (0...(utf8.count - key.count)).first(where: { utf8[$0..<$0 + key.count].elementsEqual(key) })
        else { return nil }
        let value = utf8[(start + key.count)...].prefix { $0 != UInt8(ascii: "\"") }
        return Timestamp.milliseconds(iso8601: String(decoding: value, as: UTF8.self))
    }
}
