/// The webhooks' durable state, beside the orders: the endpoints, and the deliveries the outbox
/// makes from the event log. The event log is the outbox itself (an event is written in the
/// transaction of its change); the store keeps how far it has been read (the outbox cursor) and,
/// per endpoint and event, a delivery, marked done only on a 2xx.
///
/// Several instances over one PostgreSQL database share the work through leases: a delivery is
/// claimed by one instance until its lease ends, so no two send it at once, and a killed
/// instance's claims are taken over when theirs run out.
public protocol WebhookStore: AnyObject, Sendable {
    /// Adds an endpoint, enabled.
    func createWebhookEndpoint(url: String, eventTypes: [String], secret: String, nowMilliseconds: Int64)
        throws(StorageError) -> WebhookEndpoint

    /// Every endpoint, oldest first.
    func webhookEndpoints() throws(StorageError) -> [WebhookEndpoint]

    /// Changes an endpoint; nil when there is none with that id.
    func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) throws(StorageError) -> WebhookEndpoint?

    /// Removes an endpoint with its deliveries and their attempts; false when there was none.
    func deleteWebhookEndpoint(id: Int64) throws(StorageError) -> Bool

    /// How far the outbox has read the event log (nil before it first has).
    func webhookCursor() throws(StorageError) -> EventPosition?

    /// Adds deliveries made from the events after `from` up to `to`, and moves the cursor to
    /// `to`, in one transaction, when the cursor is still at `from` (so two instances reading
    /// the same events add them once); false when another instance moved it first.
    func enqueueWebhookDeliveries(
        _ deliveries: [NewWebhookDelivery], from: EventPosition?, to: EventPosition, nowMilliseconds: Int64
    ) throws(StorageError) -> Bool

    /// Claims up to `limit` deliveries that are due, of enabled endpoints, each the earliest
    /// undelivered one of its order for its endpoint, and not claimed by anyone whose lease
    /// still runs; leases them to `owner` until `leaseUntilMilliseconds`.
    func claimWebhookDeliveries(owner: String, nowMilliseconds: Int64, leaseUntilMilliseconds: Int64, limit: Int)
        throws(StorageError) -> [WebhookDelivery]

    /// Records attempts and their consequences, in one transaction.
    func recordWebhookResults(_ results: [WebhookResult]) throws(StorageError)

    /// The latest attempts at an endpoint's deliveries, newest first.
    func webhookAttempts(endpointID: Int64, limit: Int) throws(StorageError) -> [WebhookAttempt]

    /// Makes an event's deliveries due again now, each with a fresh retry schedule; returns how
    /// many.
    func redeliverWebhookEvent(eventID: Int64, nowMilliseconds: Int64) throws(StorageError) -> Int

    /// How many deliveries are pending, and when the oldest of them was made (nil when none is).
    func webhookBacklog() throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?)
}
