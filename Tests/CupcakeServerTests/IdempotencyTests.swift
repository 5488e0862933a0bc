import CupcakeDomain
import CupcakeServer
import CupcakeStorage
import CupcakeTestSupport
import Foundation
import Testing

@Suite struct IdempotencyTests {
    static let order = #"{"type":1,"quantity":6,"name":"Ann","streetAddress":"2 Elm","city":"Austin","zip":"73301"}"#

    @Test(arguments: Engine.allCases)
    func theSameKeyAndBodyReplaysTheFirstAnswer(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let first = try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["Idempotency-Key": "key-1"])
        #expect(first.status == 201)
        #expect(first.headers["idempotent-replayed"] == nil)
        // Whitespace and key order do not make it a different request; the normalized order is compared.
        let again = try RawHTTP.postOrder(
            port: server.port,
            json:
                #"{ "quantity": 6, "type": 1, "name": " Ann", "streetAddress": "2 Elm", "city": "Austin", "zip": "73301" }"#,
            headers: ["Idempotency-Key": "key-1"])
        #expect(again.status == 201)
        #expect(again.headers["idempotent-replayed"] == "true")
        // The same answer, but for the receipt token, which is shown only once.
        var original = try #require(first.json)
        #expect((original.removeValue(forKey: "receiptToken") as? String)?.hasPrefix("rct_") == true)
        let replayed = try #require(again.json)
        #expect(replayed["receiptToken"] == nil)
        let sorted = { (object: [String: Any]) in
            try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
        }
        #expect(try sorted(replayed) == sorted(original))
        #expect(try server.orderCount() == 1)
    }

    @Test(arguments: Engine.allCases)
    func theSameKeyWithADifferentBodyIs422(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        _ = try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["Idempotency-Key": "key-2"])
        let other = try RawHTTP.postOrder(
            port: server.port, json: Self.order.replacingOccurrences(of: "\"quantity\":6", with: "\"quantity\":7"),
            headers: ["Idempotency-Key": "key-2"])
        #expect(other.status == 422)
        #expect(other.headers["content-type"] == "application/problem+json")
        #expect(try server.orderCount() == 1)
    }

    struct KeyCase: Sendable, CustomTestStringConvertible {
        /// The Idempotency-Key header as sent.
        var header: String
        /// The key it names, or nil when it is refused with 400.
        var key: String?
        var testDescription: String {
            "\(header.debugDescription.prefix(40)) → \(key.map { "key \($0.count) chars" } ?? "400")"
        }
    }

    static let keyCases: [KeyCase] = [
        KeyCase(header: "plain-1", key: "plain-1"),
        KeyCase(header: " \tpadded-1 \t", key: "padded-1"),
        KeyCase(header: String(repeating: "k", count: 255), key: String(repeating: "k", count: 255)),
        KeyCase(header: String(repeating: "k", count: 256), key: nil),
        KeyCase(header: "two words", key: nil),
        KeyCase(header: "caf\u{E9}", key: nil),
        KeyCase(header: "padded\u{A0}", key: nil),
        KeyCase(header: " \t ", key: nil),
    ]

    /// A key is its visible ASCII without the spaces and tabs around it: the padded key and the
    /// bare one are the same request; anything else is refused with 400 and stores nothing.
    @Test(arguments: keyCases)
    func aKeyIsItsVisibleASCIIWithoutTheWhitespaceAroundIt(_ example: KeyCase) throws {
        let server = try TestServer(engine: .sqlite)
        let first = try RawHTTP.postOrder(
            port: server.port, json: Self.order, headers: ["Idempotency-Key": example.header])
        guard let key = example.key else {
            #expect(first.status == 400)
            #expect(first.headers["content-type"] == "application/problem+json")
            #expect(try server.orderCount() == 0)
            return
        }
        #expect(first.status == 201)
        #expect(first.headers["idempotent-replayed"] == nil)
        let again = try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["Idempotency-Key": key])
        #expect(again.status == 201)
        #expect(again.headers["idempotent-replayed"] == "true")
        #expect(try server.orderCount() == 1)
    }

    // 20 and 100 parallel posts with one key: ReliabilityTests.ConcurrencyTests.

    @Test func aKeyStillInFlightAnswers409() throws {
        let directory = try TemporaryDirectory()
        let store = try GatedStore(path: directory.path("orders.sqlite"))
        let committer = GroupCommitter(store: store)
        defer {
            store.gate.signal()
            committer.shutdown()
            store.close()
        }
        let api = OrderAPI(
            store: store, committer: committer, access: AccessPolicy(), log: AccessLog(enabled: false, write: { _ in }))
        let request = HTTPRequest(
            method: "POST", path: "/api/cupcakes",
            headers: ["idempotency-key": "slow", "content-type": "application/json"], body: Array(Self.order.utf8))
        let first = ResponseBox()
        api.handle(request) { first.set($0) }
        let second = ResponseBox()
        api.handle(request) { second.set($0) }
        #expect(second.wait()?.status == 409)
        store.gate.signal()
        #expect(first.wait()?.status == 201)
        let third = ResponseBox()
        api.handle(request) { third.set($0) }
        #expect(third.wait()?.header("Idempotent-Replayed") == "true")
    }

    @Test func aStorageFailureIsA500ThatLeaksNothing() throws {
        let (response, _) = try postThroughFailingStore(
            StorageError(.failed, "disk I/O error writing table orders (SQLite 10)"), requestID: "r-1")
        #expect(response.status == 500)
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("r-1"))
        #expect(!text.lowercased().contains("sqlite"))
        #expect(!text.contains("orders"))
        #expect(!text.contains("disk"))
    }
}

/// A full or failing disk: 503 with Retry-After (the client may try again), nothing stored, the
/// cause in the log and not in the answer.
@Suite struct StorageUnavailableTests {
    @Test func aFullDiskIsA503WithRetryAfter() throws {
        let logged = TextCollector()
        let (response, stored) = try postThroughFailingStore(
            StorageError(.temporary, "database or disk is full (SQLite 13)"), requestID: "r-9",
            log: AccessLog(write: logged.add))
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "5")
        #expect(response.header("Content-Type") == "application/problem+json")
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("cannot store orders right now"))
        #expect(!text.lowercased().contains("sqlite"))
        #expect(stored == 0)
        #expect(logged.waitFor(containing: "error: request r-9: storage temporary: database or disk is full"))
    }
}

/// POSTs the test order through the API to a real store whose inserts fail with `failure`;
/// returns the answer and how many orders the store holds afterwards.
private func postThroughFailingStore(
    _ failure: StorageError, requestID: String, log: AccessLog = AccessLog(enabled: false, write: { _ in })
) throws -> (HTTPResponse, Int) {
    let directory = try TemporaryDirectory()
    let store = try GatedStore(path: directory.path("orders.sqlite"))
    store.failure = failure
    store.gate.signal()
    let committer = GroupCommitter(store: store)
    defer {
        committer.shutdown()
        store.close()
    }
    let api = OrderAPI(store: store, committer: committer, access: AccessPolicy(), log: log)
    let box = ResponseBox()
    api.handle(
        HTTPRequest(
            method: "POST", path: "/api/cupcakes", headers: ["content-type": "application/json"],
            body: Array(IdempotencyTests.order.utf8), requestID: requestID)
    ) { box.set($0) }
    let response = try #require(box.wait())
    return (response, try store.orderCount())
}

/// A real SQLite store whose inserts wait until the test opens the gate, and then fail with
/// `failure` when the test sets one.
final class GatedStore: OrderStore, @unchecked Sendable {
    let inner: any OrderStore
    let gate = DispatchSemaphore(value: 0)
    var failure: StorageError?
    init(path: String) throws { inner = try OrderStores.open(path) }
    var location: String { inner.location }
    var durability: String { inner.durability }
    func bulkInsert(count: Int, batchSize: Int, make: (Int) -> NewOrder, progress: (Int) -> Void)
        throws(StorageError)
    {
        try inner.bulkInsert(count: count, batchSize: batchSize, make: make, progress: progress)
    }
    func insert(_ batch: [NewOrder]) throws(StorageError) -> [StoredOrder] {
        gate.wait()
        gate.signal()
        if let failure { throw failure }
        return try inner.insert(batch)
    }
    func order(id: Int64, history: Bool) throws(StorageError) -> StoredOrder? {
        try inner.order(id: id, history: history)
    }
    func orderCount() throws(StorageError) -> Int { try inner.orderCount() }
    func list(_ query: OrderQuery) throws(StorageError) -> OrderPage { try inner.list(query) }
    func change(id: Int64, _ change: OrderChange) throws(StorageError) -> OrderChangeOutcome {
        try inner.change(id: id, change)
    }
    func events(after position: EventPosition, orderID: Int64?, limit: Int) throws(StorageError) -> [OrderEvent] {
        try inner.events(after: position, orderID: orderID, limit: limit)
    }
    func latestEventPosition() throws(StorageError) -> EventPosition { try inner.latestEventPosition() }
    func idempotencyRecord(key: String) throws(StorageError) -> IdempotencyRecord? {
        try inner.idempotencyRecord(key: key)
    }
    func purgeIdempotencyKeys(recordedBefore milliseconds: Int64) throws(StorageError) -> Int {
        try inner.purgeIdempotencyKeys(recordedBefore: milliseconds)
    }
    func claimIdempotencyKey(_ key: String, fingerprint: [UInt8], nowMilliseconds: Int64) throws(StorageError)
        -> IdempotencyClaimResult
    {
        try inner.claimIdempotencyKey(key, fingerprint: fingerprint, nowMilliseconds: nowMilliseconds)
    }
    func releaseIdempotencyKey(_ key: String, committed: Bool) {
        inner.releaseIdempotencyKey(key, committed: committed)
    }
    func close() { inner.close() }
    func createWebhookEndpoint(url: String, eventTypes: [String], secret: String, nowMilliseconds: Int64)
        throws(StorageError) -> WebhookEndpoint
    {
        try inner.createWebhookEndpoint(
            url: url, eventTypes: eventTypes, secret: secret, nowMilliseconds: nowMilliseconds)
    }
    func webhookEndpoints() throws(StorageError) -> [WebhookEndpoint] { try inner.webhookEndpoints() }
    func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) throws(StorageError) -> WebhookEndpoint? {
        try inner.changeWebhookEndpoint(id: id, change)
    }
    func deleteWebhookEndpoint(id: Int64) throws(StorageError) -> Bool { try inner.deleteWebhookEndpoint(id: id) }
    func webhookEvent(id: Int64) throws(StorageError) -> OrderEvent? { try inner.webhookEvent(id: id) }
    func leaseWebhookStream(endpointID: Int64, owner: String, nowMilliseconds: Int64, untilMilliseconds: Int64)
        throws(StorageError) -> EventPosition?
    {
        try inner.leaseWebhookStream(
            endpointID: endpointID, owner: owner, nowMilliseconds: nowMilliseconds,
            untilMilliseconds: untilMilliseconds)
    }
    func webhookOrdersWaiting(endpointID: Int64, orderIDs: [Int64]) throws(StorageError) -> Set<Int64> {
        try inner.webhookOrdersWaiting(endpointID: endpointID, orderIDs: orderIDs)
    }
    func recordWebhookBatch(_ batch: WebhookBatch) throws(StorageError) -> Bool { try inner.recordWebhookBatch(batch) }
    func claimWebhookDeliveries(owner: String, nowMilliseconds: Int64, leaseUntilMilliseconds: Int64, limit: Int)
        throws(StorageError) -> [WebhookDelivery]
    {
        try inner.claimWebhookDeliveries(
            owner: owner, nowMilliseconds: nowMilliseconds, leaseUntilMilliseconds: leaseUntilMilliseconds,
            limit: limit)
    }
    func recordWebhookResults(_ results: [WebhookResult]) throws(StorageError) {
        try inner.recordWebhookResults(results)
    }
    func webhookAttempts(endpointID: Int64, limit: Int) throws(StorageError) -> [WebhookAttempt] {
        try inner.webhookAttempts(endpointID: endpointID, limit: limit)
    }
    func pruneWebhookHistory(beforeMilliseconds: Int64, limit: Int) throws(StorageError) -> Int {
        try inner.pruneWebhookHistory(beforeMilliseconds: beforeMilliseconds, limit: limit)
    }
    func redeliverWebhookEvent(
        eventID: Int64, orderID: Int64, type: String, endpointIDs: [Int64], nowMilliseconds: Int64
    ) throws(StorageError) -> Int {
        try inner.redeliverWebhookEvent(
            eventID: eventID, orderID: orderID, type: type, endpointIDs: endpointIDs, nowMilliseconds: nowMilliseconds)
    }
    func webhookBacklog() throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) {
        try inner.webhookBacklog()
    }
}

/// Collects an asynchronous answer; `wait` gives up after 10 s.
final class ResponseBox: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var response: HTTPResponse?
    func set(_ response: HTTPResponse) {
        lock.withLock { self.response = response }
        semaphore.signal()
    }
    func wait() -> HTTPResponse? {
        _ = semaphore.wait(timeout: .now() + 10)
        return lock.withLock { response }
    }
}
