import CupcakeDomain
import CupcakeJSON
import CupcakeStorage
import Foundation

/// Carries the event log to Server-Sent Event streams. One thread reads the log every
/// ``pollSeconds`` (the same on both engines; on PostgreSQL it is also how a change made through
/// another instance arrives) and hands each event to the streams that want it, in the log's
/// order; every ``heartbeatSeconds`` each stream gets a comment, which keeps idle streams open
/// through proxies and shows a client that went away (its write fails and libmicrohttpd closes
/// the connection).
///
/// A stream that resumes from a `Last-Event-ID` first reads what it missed from the database,
/// while the events the hub reads meanwhile wait in its buffer; then the buffer is sent, minus
/// what the database already gave it. Each stream sends only events after the last it sent, so
/// none is sent twice and none is skipped.
public final class EventHub: @unchecked Sendable {
    // Safe: `subscribers`, `position`, `nextToken` and `running` are only touched while holding
    // `lock`.
    private struct Subscriber {
        let stream: ResponseStream
        /// One order's events only, or every order's.
        let orderID: Int64?
        /// The last event sent.
        var last: EventPosition
        /// While the stream catches up from the database: the events the hub read meanwhile.
        var buffer: [OrderEvent]?
        /// Ends the stream after an order's final status (one order's stream).
        let endsAtFinal: Bool
    }

    private let lock = NSLock()
    private var subscribers: [Int: Subscriber] = [:]
    private var nextToken = 0
    private var position = EventPosition.start
    private var running = false
    private let store: any OrderStore
    private let done = DispatchSemaphore(value: 0)
    /// Signalled when this instance has just made a change: the log is read at once instead of
    /// at the next poll.
    private let wake = DispatchSemaphore(value: 0)
    /// How often the log is read.
    let pollSeconds: Double
    /// How often an idle stream gets a comment.
    let heartbeatSeconds: Double
    /// The most events read from the database at once.
    static let batch = 500

    init(store: any OrderStore, pollSeconds: Double = 0.1, heartbeatSeconds: Double = 10) {
        self.store = store
        self.pollSeconds = pollSeconds
        self.heartbeatSeconds = heartbeatSeconds
    }

    /// Starts reading the log from its end now.
    func start() {
        lock.withLock {
            position = (try? store.latestEventPosition()) ?? .start
            running = true
        }
        let thread = Thread { [self] in run() }
        thread.name = "cupcake-events"
        thread.start()
    }

    /// Ends every stream and stops reading.
    func stop() {
        let streams = lock.withLock { () -> [ResponseStream]? in
            guard running else { return nil }
            running = false
            return subscribers.values.map(\.stream)
        }
        guard let streams else { return }
        for stream in streams { stream.finish() }
        wake.signal()
        _ = done.wait(timeout: .now() + 5)
    }

    /// How many streams are open.
    var streamCount: Int { lock.withLock { subscribers.count } }

    private func run() {
        var lastBeat = Date()
        while lock.withLock({ running }) {
            poll()
            if Date().timeIntervalSince(lastBeat) >= heartbeatSeconds {
                lastBeat = Date()
                let streams = lock.withLock { subscribers.values.map(\.stream) }
                for stream in streams { stream.write(Array(": keep-alive\n\n".utf8)) }
            }
            _ = wake.wait(timeout: .now() + pollSeconds)
        }
        done.signal()
    }

    /// Reads the log now: a change was just committed through this instance.
    func nudge() { wake.signal() }

    /// Reads what is new and hands it on.
    private func poll() {
        while true {
            let from = lock.withLock { position }
            guard let events = try? store.events(after: from, orderID: nil, limit: Self.batch), !events.isEmpty
            else { return }
            lock.withLock {
                for event in events {
                    for token in Array(subscribers.keys) { deliver(event, to: token) }
                }
                position = events[events.count - 1].position
            }
            if events.count < Self.batch { return }
        }
    }

    /// Sends or buffers one event for one subscriber; needs the lock.
    private func deliver(_ event: OrderEvent, to token: Int) {
        guard var subscriber = subscribers[token] else { return }
        if let orderID = subscriber.orderID, orderID != event.orderID { return }
        if subscriber.buffer != nil {
            subscriber.buffer?.append(event)
        } else if event.position > subscriber.last {
            subscriber.stream.write(Self.message(event))
            subscriber.last = event.position
            if subscriber.endsAtFinal && event.change.status.isFinal { subscriber.stream.finish() }
        }
        subscribers[token] = subscriber
    }

    /// A stream of one order's events (from its first, or after `after`), or of every order's
    /// (from now, or after `after`). One order's stream ends after its final status; `isFinal`
    /// says the order is final already (read before subscribing).
    func subscribe(orderID: Int64?, after: EventPosition?, isFinal: Bool = false) throws(StorageError)
        -> ResponseStream
    {
        let token = lock.withLock { () -> Int in
            nextToken += 1
            return nextToken
        }
        let stream = ResponseStream(initial: Array("retry: 2000\n\n".utf8)) { [weak self] in
            self?.lock.withLock { _ = self?.subscribers.removeValue(forKey: token) }
        }
        let catchUp = orderID != nil || after != nil
        let start = lock.withLock { () -> EventPosition in
            let start = after ?? (orderID != nil ? .start : position)
            subscribers[token] = Subscriber(
                stream: stream, orderID: orderID, last: start, buffer: catchUp ? [] : nil, endsAtFinal: orderID != nil)
            return start
        }
        guard catchUp else { return stream }
        var cursor = start
        var sawFinal = false
        do {
            while true {
                let events = try store.events(after: cursor, orderID: orderID, limit: Self.batch)
                for event in events {
                    stream.write(Self.message(event))
                    cursor = event.position
                    sawFinal = sawFinal || event.change.status.isFinal
                }
                if events.count < Self.batch { break }
            }
        } catch {
            lock.withLock { _ = subscribers.removeValue(forKey: token) }
            throw error
        }
        lock.withLock {
            guard var subscriber = subscribers[token] else { return }
            subscriber.last = cursor
            let buffered = subscriber.buffer ?? []
            subscriber.buffer = nil
            subscribers[token] = subscriber
            for event in buffered { deliver(event, to: token) }
        }
        if orderID != nil && (sawFinal || isFinal) { stream.finish() }
        return stream
    }

    /// One event as an SSE message: its position as the `id`, `event: status`, and the change
    /// as one line of JSON.
    static func message(_ event: OrderEvent) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("orderId")
        writer.string(String(event.orderID))
        writer.key("status")
        writer.string(event.change.status.wireName)
        writer.key("version")
        writer.integer(Int(event.version))
        writer.key("at")
        writer.timestamp(milliseconds: event.change.atMilliseconds)
        writer.key("by")
        writer.string(event.change.actor.rawValue)
        if let reason = event.change.reason {
            writer.key("reason")
            writer.string(reason)
        }
        writer.endObject()
        return Array("id: \(event.position)\nevent: status\ndata: ".utf8) + writer.bytes + Array("\n\n".utf8)
    }
}
