import Foundation

/// Several clients posting orders over kept-alive connections, each with its own
/// Idempotency-Key, keeping a ledger of what was sent and what was answered: the load the
/// reliability tests crash, back up and inspect under.
public final class OrderLoad: @unchecked Sendable {
    // Safe: `ledger`, `stopped` and `port` are only touched while holding `lock`; the threads
    // are started and joined by the owner.

    /// One order sent.
    public struct Sent: Sendable {
        /// Its Idempotency-Key.
        public var key: String
        /// The JSON sent.
        public var body: String
        /// The customer name in it (unique per order).
        public var name: String
        /// The answer's status; 0 when no answer came (the server died, or the connection broke).
        public var status: Int
        /// The id, when answered 201.
        public var id: String?
        /// When the request was sent.
        public var sentAt: Date
        /// How many times it was sent (more than once only for a load that retries).
        public var attempts = 1
    }

    private let lock = NSLock()
    private var ledger: [Sent] = []
    private var stopped = false
    private var port: Int
    private let finished = DispatchGroup()
    private let extraHeaders: String
    private let retries: Bool

    /// Starts `clients` threads posting to `port`, each at most `perClient` orders, with names
    /// `"<prefix> C<client> N<number>"` and `headers` (an API key, say). They run until
    /// ``stop()``, or until each has sent its orders.
    ///
    /// With `retries`, a client that gets no answer, 409, 502, 503 or 504 sends the same order
    /// with the same key again, as a real client would, for up to 20 s, on a new connection; the
    /// ledger keeps the last answer.
    public init(
        port: Int, clients: Int, perClient: Int, prefix: String, headers: [String: String] = [:],
        retries: Bool = false
    ) {
        self.port = port
        self.retries = retries
        extraHeaders = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        for client in 0..<clients {
            finished.enter()
            let thread = Thread { [self] in
                run(client: client, count: perClient, prefix: prefix)
                finished.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Points the clients at a new port (a restarted server); they reconnect on their own.
    public func retarget(port: Int) { lock.withLock { self.port = port } }

    /// Everything sent so far.
    public var sent: [Sent] { lock.withLock { ledger } }

    /// How many orders were acknowledged with 201 so far.
    public var acknowledged: Int { lock.withLock { ledger.count { $0.status == 201 } } }

    /// Stops the clients and waits (at most 30 s) for them; returns the ledger.
    @discardableResult
    public func stop() -> [Sent] {
        lock.withLock { stopped = true }
        _ = finished.wait(timeout: .now() + 30)
        return sent
    }

    /// Waits for every client to finish its orders (at most `timeout` seconds).
    public func wait(timeout: Double) -> Bool {
        finished.wait(timeout: .now() + timeout) == .success
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func run(client: Int, count: Int, prefix: String) {
        var socket: TestSocket?
        var number = 0
        while number < count, !isStopped {
            if socket == nil {
                socket = try? TestSocket(port: lock.withLock { port }, timeout: 10)
                if socket == nil {
                    usleep(20_000)  // the server is restarting; the loop is bounded by stop()
                    continue
                }
            }
            guard let connection = socket else { continue }
            number += 1
            let name = "\(prefix) C\(client) N\(number)"
            let key = "\(prefix)-\(client)-\(number)"
            let body = HostileCorpus.valid.replacingOccurrences(of: "\"Taylor\"", with: "\"\(name)\"")
            let head =
                "POST /api/cupcakes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + extraHeaders + "Idempotency-Key: \(key)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            let sentAt = Date()
            var response: RawHTTP.Response?
            if (try? connection.send(Data((head + body).utf8))) != nil {
                response = connection.receiveResponse(deadline: Date().addingTimeInterval(10))
            }
            var attempts = 1
            if retries {
                let deadline = Date().addingTimeInterval(20)
                while [0, 409, 502, 503, 504].contains(response?.status ?? 0), Date() < deadline {
                    usleep(50_000)
                    attempts += 1
                    response = nil
                    guard let again = try? TestSocket(port: lock.withLock { port }, timeout: 10) else { continue }
                    if (try? again.send(Data((head + body).utf8))) != nil {
                        response = again.receiveResponse(deadline: Date().addingTimeInterval(10))
                    }
                }
                if attempts > 1 { socket = nil }
            }
            let status = response?.status ?? 0
            let id = status == 201 ? response?.json?["id"] as? String : nil
            lock.withLock {
                ledger.append(
                    Sent(key: key, body: body, name: name, status: status, id: id, sentAt: sentAt, attempts: attempts))
            }
            if response == nil || response?.headers["connection"]?.lowercased() == "close" { socket = nil }
        }
    }
}

extension OrderLoad {
    /// What replaying one order answered.
    public struct Replay: Sendable {
        /// The order replayed.
        public var sent: Sent
        /// The answer's status (0: none).
        public var status: Int
        /// The id answered.
        public var id: String?
        /// Whether the server said it was a replay (`Idempotent-Replayed: true`).
        public var replayed: Bool
    }

    /// Sends every order again with its own key, over `clients` kept-alive connections.
    public static func replay(_ orders: [Sent], port: Int, clients: Int = 8) -> [Replay] {
        let chunks = stride(from: 0, to: orders.count, by: max(1, (orders.count + clients - 1) / clients)).map {
            Array(orders[$0..<min($0 + (orders.count + clients - 1) / clients, orders.count)])
        }
        let results = Parallel.run(chunks.count, timeout: 600) { index -> [Replay] in
            var socket = try? TestSocket(port: port, timeout: 10)
            var answers: [Replay] = []
            for sent in chunks[index] {
                if socket == nil { socket = try? TestSocket(port: port, timeout: 10) }
                let head =
                    "POST /api/cupcakes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Idempotency-Key: \(sent.key)\r\nContent-Length: \(sent.body.utf8.count)\r\n\r\n"
                var response: RawHTTP.Response?
                if let socket, (try? socket.send(Data((head + sent.body).utf8))) != nil {
                    response = socket.receiveResponse(deadline: Date().addingTimeInterval(10))
                }
                if response == nil { socket = nil }
                answers.append(
                    Replay(
                        sent: sent, status: response?.status ?? 0, id: response?.json?["id"] as? String,
                        replayed: response?.headers["idempotent-replayed"] == "true"))
            }
            return answers
        }
        return results.flatMap { $0 ?? [] }
    }
}
