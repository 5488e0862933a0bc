import CMicroHTTPD
import CupcakeCheckout
import CupcakeDomain
import CupcakeStorage
import Foundation

/// Delivers the event log to webhook endpoints, at least once, in each order's order.
///
/// Each endpoint reads the log itself, from its position. One loop thread, every
/// ``pollSeconds`` or when woken:
/// 1. records the attempts at deliveries its delivery threads finished (one transaction);
/// 2. closes each endpoint's stretch of the log whose attempts have all ended (or that has been
///    out ``stretchMilliseconds``): in one transaction its attempts are recorded, what it did not
///    deliver becomes a delivery (an attempt that failed, one still running, one not started,
///    an event waiting behind an earlier one of its order), and the position moves past it;
/// 3. claims due deliveries (each the earliest undelivered of its order for its endpoint);
/// 4. reads the next stretch of each enabled endpoint without one out, and hands its events to
///    the delivery threads as they are: nothing is written for an event delivered at its first
///    attempt but its attempt.
///
/// The log is the outbox: each event was written in its change's transaction, so none is
/// missed, and a position moves only past events delivered or stored as deliveries. A delivery
/// is done only on a 2xx. Anything else is retried on ``retrySchedule`` (scaled by
/// ``WebhookSettings/retryScale``, with ±20% jitter) and, after its last step, failed; an
/// endpoint failing for ``WebhookSettings/disableAfterSeconds`` is disabled, and a 410 disables
/// it at once. The delivery threads have their own libcurl connections and the store's own
/// connections, so a slow receiver never holds up an order.
///
/// A kill between a receiver's 2xx and the record of it sends that event again (its stretch is
/// read again, or its delivery claimed again once its lease ends), with the same `webhook-id`:
/// receivers drop what they have seen.
public final class WebhookDispatcher: @unchecked Sendable {
    // Safe: `queue`, `finished`, `stretches`, `endpoints`, `inFlight` and `running` are only
    // touched while holding `lock`.
    private let lock = NSLock()
    private let store: any OrderStore
    private let settings: WebhookSettings
    private let metrics: Metrics
    private let log: AccessLog
    private let now: @Sendable () -> Int64
    /// Work waiting for a delivery thread.
    private var queue: [Job] = []
    /// Attempts at stored deliveries, not recorded yet.
    private var finished: [WebhookResult] = []
    /// Per endpoint, the stretch of the log out (one at a time per endpoint).
    private var stretches: [Int64: Stretch] = [:]
    private var endpoints: [Int64: WebhookEndpoint] = [:]
    private var inFlight = 0
    private var running = false
    private var serial = 0
    private let wake = DispatchSemaphore(value: 0)
    private let work = DispatchSemaphore(value: 0)
    private let stopped = DispatchGroup()
    /// This instance, as the owner of its leases.
    let owner: String
    /// How often the log and the due deliveries are looked at when nothing wakes the loop.
    let pollSeconds: Double
    /// The most events read from the log at once.
    static let batch = 500
    /// How long a stretch may be out before what it has not delivered is stored as deliveries,
    /// so that one slow attempt does not hold up the endpoint's next events.
    static let stretchMilliseconds: Int64 = 1000

    /// One piece of work for a delivery thread: a stored delivery, or an event read from the log.
    private struct Job {
        var delivery: WebhookDelivery
        /// The event, when it was read from the log (its body is made on the delivery thread).
        var event: OrderEvent?
        var leaseUntil: Int64
        /// The stretch it belongs to (its serial), for an event read from the log.
        var stretch: Int?
    }

    /// An endpoint's stretch of the log out: its events, and what became of each.
    private struct Stretch {
        enum State {
            case queued
            case sending
            case done(WebhookResult, body: String)
            /// Waits behind an earlier event of its order that is still owed.
            case waiting
            /// Not started before its lease left room for an attempt.
            case dropped
        }
        var serial: Int
        var endpoint: WebhookEndpoint
        var from: EventPosition
        var to: EventPosition
        var startedAt: Int64
        var leaseUntil: Int64
        var events: [OrderEvent]
        var states: [Int64: State]
        var closing = false

        var allEnded: Bool {
            states.values.allSatisfy {
                switch $0 {
                case .queued, .sending: false
                default: true
                }
            }
        }
    }

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
            // the webhooks' transactions, and a holder starved of CPU would hold up the commits of
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

    /// Stops taking work, lets attempts in flight end for up to `grace` seconds and records them
    /// (one still running after that is sent again, its stretch read again or its lease ended).
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
    /// deliveries follow after. They hold no lock the order path waits for (they read the order
    /// for the body on a reader connection of their own; every write is the loop thread's, at the
    /// normal priority). A reader's snapshot would keep SQLite from starting its WAL over, so a
    /// starved thread must not sit on one: each read is one or two point queries whose
    /// transaction ends with the statement, before the HTTP exchange starts (the webhook volume
    /// test posts past three WAL restarts with these threads reading throughout). Only scheduling changes: every attempt is still bounded by libcurl's
    /// wall-clock timeouts, a delivery is started only while its lease has room for a whole
    /// attempt, and one recorded after its lease ended is at worst sent again under the same
    /// `webhook-id` (see docs/RELIABILITY.md).
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
            // Wake-ups that came meanwhile are all served by the next pass.
            while wake.wait(timeout: .now()) == .success {}
        }
        // Stopping: attempts still running get a moment to end (bounded: libcurl's timeouts end
        // them anyway); then what was sent is recorded, and what was not is stored as deliveries.
        for _ in 0..<200 where lock.withLock({ inFlight > 0 }) { usleep(10_000) }
        closeStretches(all: true)
        record()
    }

    /// One pass: record, close, claim, read. A storage failure is logged and the pass tried again
    /// at the next poll (nothing is lost: positions and deliveries did not move).
    private func cycle() {
        record()
        do {
            // The endpoints, read once for the pass: whose log to read, and where to send.
            let all = try store.webhookEndpoints()
            lock.withLock { endpoints = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) }) }
            closeStretches(all: false)
            try claim()
            for endpoint in all where endpoint.enabled { try read(endpoint) }
            try prune()
        } catch {
            log.notice("webhooks: \(error)")
        }
    }

    /// When the delivery history was last pruned (the loop's own: only `run` touches it).
    private var prunedAt: Int64 = 0
    /// How often the history is pruned, and the most rows of each table one transaction deletes.
    static let pruneMilliseconds: Int64 = 10_000
    static let pruneBatch = 1_000

    /// Every ``pruneMilliseconds``, forgets the attempts and finished deliveries older than
    /// ``WebhookSettings/historyDays``: a few short transactions of at most ``pruneBatch`` rows
    /// each (up to ten while a whole batch went), so a long backlog of history goes over a
    /// few passes without holding the writer long at any one time.
    private func prune() throws {
        let time = now()
        guard time - prunedAt >= Self.pruneMilliseconds else { return }
        prunedAt = time
        let before = time - Int64(settings.historyDays) * 86_400_000
        for _ in 0..<10 {
            guard try store.pruneWebhookHistory(beforeMilliseconds: before, limit: Self.pruneBatch) >= Self.pruneBatch
            else { break }
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

    /// The longest one attempt can take: libcurl's whole-exchange timeout bounds it.
    private var attemptMilliseconds: Int64 { Int64(settings.timeoutSeconds + settings.connectTimeoutSeconds) * 1000 }

    /// Four times the longest attempt: work waits in the queue behind other work, then its
    /// attempt must end before the lease does. A delivery thread drops work whose lease has no
    /// room left for a whole attempt (it is taken up again once the lease ends), so nothing is
    /// ever sent while another instance may hold it; a killed instance's share passes on once
    /// its leases run out.
    private var leaseMilliseconds: Int64 { 4 * attemptMilliseconds }

    /// The most pieces of work queued and running at once (a stretch or a claim per pass keeps up
    /// with a busy shop; each pass costs a few transactions whatever its size).
    static let queueLimit = 512

    private var room: Int { lock.withLock { Self.queueLimit - queue.count - inFlight } }

    /// Claims the due deliveries the delivery threads can take and queues them.
    private func claim() throws {
        let room = room
        guard room > 0 else { return }
        let time = now()
        let claimed = try store.claimWebhookDeliveries(
            owner: owner, nowMilliseconds: time, leaseUntilMilliseconds: time + leaseMilliseconds, limit: room)
        guard !claimed.isEmpty else { return }
        lock.withLock {
            queue += claimed.map { Job(delivery: $0, event: nil, leaseUntil: time + leaseMilliseconds, stretch: nil) }
        }
        for _ in claimed { work.signal() }
    }

    /// Reads the endpoint's next stretch of the log, when it has none out, and queues its events.
    private func read(_ endpoint: WebhookEndpoint) throws {
        guard lock.withLock({ stretches[endpoint.id] == nil }) else { return }
        let room = min(Self.batch, room)
        guard room > 0 else { return }
        let time = now()
        guard
            let from = try store.leaseWebhookStream(
                endpointID: endpoint.id, owner: owner, nowMilliseconds: time,
                untilMilliseconds: time + leaseMilliseconds)
        else { return }  // another instance reads it
        let read = try store.events(after: from, orderID: nil, limit: room)
        guard !read.isEmpty else { return }
        // An order's events go one stretch each: the stretch ends before an order's second event,
        // which is then read after the first was delivered or stored.
        var orders: Set<Int64> = []
        var events: [OrderEvent] = []
        var to = from
        for event in read {
            let type = WebhookEvent.type(of: event.change.status)
            if endpoint.receives(type, atMilliseconds: event.change.atMilliseconds) {
                guard orders.insert(event.orderID).inserted else { break }
                events.append(event)
            }
            to = event.position
        }
        let waiting = try store.webhookOrdersWaiting(endpointID: endpoint.id, orderIDs: Array(orders))
        let leaseUntil = time + leaseMilliseconds
        var jobs: [Job] = []
        var states: [Int64: Stretch.State] = [:]
        let number = lock.withLock { () -> Int in
            serial += 1
            return serial
        }
        for event in events {
            if waiting.contains(event.orderID) {
                states[event.position.id] = .waiting
                continue
            }
            states[event.position.id] = .queued
            jobs.append(
                Job(
                    delivery: WebhookDelivery(
                        id: 0, endpointID: endpoint.id, eventID: event.position.id, orderID: event.orderID,
                        type: WebhookEvent.type(of: event.change.status), body: "", state: .pending, attempts: 0,
                        nextAttemptMilliseconds: time),
                    event: event, leaseUntil: leaseUntil, stretch: number))
        }
        lock.withLock {
            stretches[endpoint.id] = Stretch(
                serial: number, endpoint: endpoint, from: from, to: to, startedAt: time, leaseUntil: leaseUntil,
                events: events, states: states)
            queue += jobs
        }
        for _ in jobs { work.signal() }
        // Nothing to send (none subscribed, or all waiting): closed at once.
        if jobs.isEmpty { closeStretches(all: false) }
    }

    /// Records the stretches whose attempts have all ended, or that have been out long enough
    /// (or all of them, when stopping).
    private func closeStretches(all: Bool) {
        let time = now()
        let closing = lock.withLock { () -> [Stretch] in
            var closing: [Stretch] = []
            for (id, stretch) in stretches where !stretch.closing {
                guard all || stretch.allEnded || time - stretch.startedAt >= Self.stretchMilliseconds else { continue }
                // Work not started is taken back: it becomes a delivery, claimed in its turn.
                queue.removeAll { $0.stretch == stretch.serial }
                stretches[id]?.closing = true
                closing.append(stretch)
            }
            return closing
        }
        for stretch in closing {
            // A state read now: an attempt ending from here on is recorded as a delivery's.
            let states = lock.withLock { () -> [Int64: Stretch.State] in
                let states = stretches[stretch.endpoint.id]?.states ?? stretch.states
                stretches[stretch.endpoint.id] = nil
                return states
            }
            close(stretch, states: states, at: time)
        }
    }

    private func close(_ stretch: Stretch, states: [Int64: Stretch.State], at time: Int64) {
        var attempts: [WebhookAttempt] = []
        var deliveries: [NewWebhookDelivery] = []
        var change: WebhookEndpointChange?
        for event in stretch.events {
            let type = WebhookEvent.type(of: event.change.status)
            var delivery = NewWebhookDelivery(
                endpointID: stretch.endpoint.id, eventID: event.position.id, orderID: event.orderID, type: type,
                body: "", nextAttemptMilliseconds: time)
            switch states[event.position.id] ?? .dropped {
            case .done(let result, let body):
                attempts.append(result.attempt)
                // A disabling change is kept; otherwise the latest event's says where the endpoint stands.
                if let made = result.endpointChange, !Self.disables(change) { change = made }
                switch result.outcome {
                case .delivered: continue
                case .retry(let at):
                    delivery.attempts = 1
                    delivery.nextAttemptMilliseconds = at
                    delivery.body = body
                case .gaveUp:
                    delivery.attempts = 1
                }
            case .sending:
                // Still running: stored as this instance's, until the lease its attempt runs in.
                delivery.lease = WebhookLease(owner: owner, untilMilliseconds: stretch.leaseUntil)
            case .queued, .waiting, .dropped:
                break
            }
            deliveries.append(delivery)
        }
        let batch = WebhookBatch(
            endpointID: stretch.endpoint.id, owner: owner, from: stretch.from, to: stretch.to, attempts: attempts,
            deliveries: deliveries, endpointChange: change, nowMilliseconds: time)
        do {
            if try !store.recordWebhookBatch(batch) {
                log.notice("webhooks: endpoint \(stretch.endpoint.id) was read by another instance meanwhile")
            }
        } catch {
            // Not recorded: the stretch is read again from the position that did not move, and what
            // it delivered is sent again under the same webhook-id.
            log.notice("webhooks: recording \(attempts.count) attempts: \(error)")
        }
    }

    private func deliverLoop(_ poster: WebhookPoster) {
        while true {
            work.wait()
            let next = lock.withLock { () -> (Job, WebhookEndpoint?)? in
                while running, !queue.isEmpty {
                    let job = queue.removeFirst()
                    // Too late to finish before the lease ends: left for a later claim.
                    guard now() + attemptMilliseconds < job.leaseUntil else {
                        if let serial = job.stretch { mark(job, serial: serial, .dropped) }
                        continue
                    }
                    if let serial = job.stretch { mark(job, serial: serial, .sending) }
                    inFlight += 1
                    return (job, endpoints[job.delivery.endpointID])
                }
                return nil
            }
            guard let (job, endpoint) = next else {
                if lock.withLock({ !running }) { return }
                continue
            }
            let (result, body) = attempt(job, endpoint: endpoint, poster: poster)
            let wakeLoop = lock.withLock { () -> Bool in
                inFlight -= 1
                if let serial = job.stretch, stretches[job.delivery.endpointID]?.serial == serial,
                    stretches[job.delivery.endpointID]?.closing == false
                {
                    mark(job, serial: serial, .done(result, body: body))
                    return stretches[job.delivery.endpointID]?.allEnded ?? false
                }
                // A stored delivery's, or one whose stretch was closed while it ran (stored then).
                finished.append(result)
                return queue.isEmpty
            }
            // The loop records and reads at its next poll; sooner when a stretch has ended or
            // there is nothing left to send (an order's next event waits for this one's record).
            if wakeLoop { wake.signal() }
        }
    }

    private static func disables(_ change: WebhookEndpointChange?) -> Bool {
        if case .enabled(false, _) = change { return true }
        return false
    }

    /// Sets a stretch's event's state (under `lock`).
    private func mark(_ job: Job, serial: Int, _ state: Stretch.State) {
        guard stretches[job.delivery.endpointID]?.serial == serial else { return }
        stretches[job.delivery.endpointID]?.states[job.delivery.eventID] = state
    }

    /// The waits after each failed attempt, in seconds, as the Standard Webhooks guidance
    /// describes: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; an eighth failure fails the delivery
    /// (about 28 hours after the event).
    static let retrySchedule: [Double] = [5, 300, 1800, 7200, 18000, 36000, 36000]

    /// One attempt, and its consequence; with the body sent.
    private func attempt(_ job: Job, endpoint: WebhookEndpoint?, poster: WebhookPoster) -> (WebhookResult, String) {
        let delivery = job.delivery
        let started = now()
        var body = delivery.body
        let outcome: WebhookPoster.Outcome
        if let endpoint {
            do {
                if body.isEmpty { body = try self.body(delivery, event: job.event) }
                let timestamp = started / 1000
                let id = WebhookEvent.id(delivery.eventID)
                outcome = poster.post(
                    url: endpoint.url,
                    headers: [
                        ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
                        (
                            "webhook-signature",
                            WebhookSignature.header(
                                id: id, timestamp: timestamp, body: body,
                                secrets: endpoint.signingSecrets(nowMilliseconds: started))
                        ),
                    ], body: body)
            } catch {
                outcome = WebhookPoster.Outcome(status: 0, error: "reading the event: \(error)")
            }
        } else {
            outcome = WebhookPoster.Outcome(status: 0, error: "the endpoint is gone")
        }
        return (consequence(of: outcome, delivery, endpoint: endpoint, started: started, body: body), body)
    }

    /// The body of a delivery stored without one: the event's payload, made from the log.
    private func body(_ delivery: WebhookDelivery, event: OrderEvent?) throws(StorageError) -> String {
        let found: OrderEvent?
        if let event { found = event } else { found = try store.webhookEvent(id: delivery.eventID) }
        guard let event = found else { throw StorageError(.failed, "event \(delivery.eventID) is not in the log") }
        // An order's first event (most of them): its history up to the event is the event itself,
        // so the order's row is all that is read.
        if event.version == 1, event.change.status == .placed {
            var order = try store.order(id: event.orderID, history: false)
            order?.history = [event.change]
            return WebhookEvent.payload(event, order: order)
        }
        return WebhookEvent.payload(event, order: try store.order(id: event.orderID, history: true))
    }

    private func consequence(
        of outcome: WebhookPoster.Outcome, _ delivery: WebhookDelivery, endpoint: WebhookEndpoint?, started: Int64,
        body: String
    ) -> WebhookResult {
        let ended = now()
        let success = (200...299).contains(outcome.status)
        let attempt = WebhookAttempt(
            deliveryID: delivery.id, endpointID: delivery.endpointID, eventID: delivery.eventID,
            atMilliseconds: started, status: outcome.status, durationMilliseconds: max(0, ended - started),
            error: success ? nil : outcome.error ?? "HTTP \(outcome.status)")
        if success {
            let eventTime = Self.eventTime(body)
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
