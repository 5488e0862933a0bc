/// The webhooks' durable state, beside the orders: the endpoints, how far each has read the
/// event log, and the deliveries still owed. The event log is the outbox itself (an event is
/// written in the transaction of its change).
///
/// An endpoint's events are sent as they are read from the log, and its position moves past
/// them in one transaction with their attempts once each was delivered or became a delivery
/// (one that failed, is still being sent, or waits behind an earlier event of its order). Only
/// what is still owed is stored as a delivery, marked done on a 2xx.
///
/// Several instances over one PostgreSQL database share the work through leases: one instance
/// at a time reads an endpoint's log, a delivery is claimed by one instance until its lease
/// ends, so no two send one event at once, and a killed instance's share passes on when its
/// leases run out.
public protocol WebhookStore: AnyObject, Sendable {
    /// Adds an endpoint, enabled, reading the log from its end (it receives what happens from
    /// now on).
    func createWebhookEndpoint(url: String, eventTypes: [String], secret: String, nowMilliseconds: Int64)
        throws(StorageError) -> WebhookEndpoint

    /// Every endpoint, oldest first.
    func webhookEndpoints() throws(StorageError) -> [WebhookEndpoint]

    /// Changes an endpoint; nil when there is none with that id.
    func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) throws(StorageError) -> WebhookEndpoint?

    /// Removes an endpoint with its deliveries and their attempts; false when there was none.
    func deleteWebhookEndpoint(id: Int64) throws(StorageError) -> Bool

    /// The log's event with this id; nil when there is none.
    func webhookEvent(id: Int64) throws(StorageError) -> OrderEvent?

    /// Gives `owner` the right to read an enabled endpoint's log until `untilMilliseconds`
    /// (taking it when nobody holds it or the holder's lease has ended, keeping it when it is
    /// `owner`'s), and returns the endpoint's position; nil when another instance holds it, or
    /// the endpoint is disabled or gone.
    func leaseWebhookStream(endpointID: Int64, owner: String, nowMilliseconds: Int64, untilMilliseconds: Int64)
        throws(StorageError) -> EventPosition?

    /// Of `orderIDs`, those with a delivery still owed at the endpoint: their later events wait
    /// behind it.
    func webhookOrdersWaiting(endpointID: Int64, orderIDs: [Int64]) throws(StorageError) -> Set<Int64>

    /// Records a stretch of the log read for an endpoint: its attempts, the deliveries still owed
    /// and the endpoint's change, and moves the endpoint's position from `from` to `to`, in one
    /// transaction, when it is still at `from` and `owner` still holds the right to read;
    /// otherwise writes nothing and returns false.
    func recordWebhookBatch(_ batch: WebhookBatch) throws(StorageError) -> Bool

    /// Claims up to `limit` deliveries that are due, of enabled endpoints, each the earliest
    /// undelivered one of its order for its endpoint, and not claimed by anyone whose lease
    /// still runs; leases them to `owner` until `leaseUntilMilliseconds`.
    func claimWebhookDeliveries(owner: String, nowMilliseconds: Int64, leaseUntilMilliseconds: Int64, limit: Int)
        throws(StorageError) -> [WebhookDelivery]

    /// Records attempts at deliveries (found by endpoint and event) and their consequences, in
    /// one transaction.
    func recordWebhookResults(_ results: [WebhookResult]) throws(StorageError)

    /// The latest attempts at an endpoint's deliveries, newest first.
    func webhookAttempts(endpointID: Int64, limit: Int) throws(StorageError) -> [WebhookAttempt]

    /// Forgets delivery history older than `beforeMilliseconds`: attempts made before it, and
    /// deliveries made before it that are done (delivered or failed; one still owed is kept
    /// whatever its age). At most `limit` rows of each, the oldest first; returns how many rows
    /// went.
    func pruneWebhookHistory(beforeMilliseconds: Int64, limit: Int) throws(StorageError) -> Int

    /// Makes an event due again now at each of `endpointIDs` with a fresh retry schedule (a
    /// delivery made where there is none); returns how many.
    func redeliverWebhookEvent(
        eventID: Int64, orderID: Int64, type: String, endpointIDs: [Int64], nowMilliseconds: Int64
    ) throws(StorageError) -> Int

    /// How much is owed: the deliveries pending and the events enabled endpoints have not read
    /// yet, and when the oldest of them was made (nil when nothing is owed).
    func webhookBacklog() throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?)
}
