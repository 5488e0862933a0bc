/// One event for one endpoint: what is sent, and where its delivery stands.
public struct WebhookDelivery: Sendable, Equatable {
    /// Where a delivery stands.
    public enum State: String, Sendable {
        /// Not delivered yet: due at ``WebhookDelivery/nextAttemptMilliseconds``.
        case pending
        /// An attempt got a 2xx.
        case delivered
        /// Every attempt of the retry schedule failed.
        case failed
    }

    /// The delivery's id.
    public var id: Int64
    /// The endpoint.
    public var endpointID: Int64
    /// The event: its id is the `webhook-id`, the same on every attempt.
    public var eventID: Int64
    /// The event's order (an order's events are delivered in their order).
    public var orderID: Int64
    /// The event type (`order.placed`, …).
    public var type: String
    /// The body, the same on every attempt; empty when it is to be made from the event when sent
    /// (a redelivery, or an event that was waiting its turn).
    public var body: String
    /// Where it stands.
    public var state: State
    /// Attempts made so far.
    public var attempts: Int
    /// When the next attempt is due (milliseconds since 1970).
    public var nextAttemptMilliseconds: Int64

    /// Creates a delivery's value.
    public init(
        id: Int64, endpointID: Int64, eventID: Int64, orderID: Int64, type: String, body: String, state: State,
        attempts: Int, nextAttemptMilliseconds: Int64
    ) {
        self.id = id
        self.endpointID = endpointID
        self.eventID = eventID
        self.orderID = orderID
        self.type = type
        self.body = body
        self.state = state
        self.attempts = attempts
        self.nextAttemptMilliseconds = nextAttemptMilliseconds
    }
}

/// An event read from the log that an endpoint still needs, as the outbox hands it to the store:
/// one whose first attempt failed, one still being sent, or one waiting behind an earlier event
/// of its order.
public struct NewWebhookDelivery: Sendable, Equatable {
    public var endpointID: Int64
    public var eventID: Int64
    public var orderID: Int64
    public var type: String
    /// The body (empty: made from the event when sent).
    public var body: String
    /// Attempts made so far.
    public var attempts: Int
    /// When the next attempt is due.
    public var nextAttemptMilliseconds: Int64
    /// The instance sending it now, and until when (an attempt still running).
    public var lease: WebhookLease?

    /// Creates one.
    public init(
        endpointID: Int64, eventID: Int64, orderID: Int64, type: String, body: String, attempts: Int = 0,
        nextAttemptMilliseconds: Int64 = 0, lease: WebhookLease? = nil
    ) {
        self.endpointID = endpointID
        self.eventID = eventID
        self.orderID = orderID
        self.type = type
        self.body = body
        self.attempts = attempts
        self.nextAttemptMilliseconds = nextAttemptMilliseconds
        self.lease = lease
    }
}

/// Who sends a delivery, and until when nobody else may.
public struct WebhookLease: Sendable, Equatable {
    public var owner: String
    public var untilMilliseconds: Int64

    /// Creates one.
    public init(owner: String, untilMilliseconds: Int64) {
        self.owner = owner
        self.untilMilliseconds = untilMilliseconds
    }
}

/// What became of a stretch of the event log read for one endpoint, recorded in one transaction:
/// the attempts made, the deliveries still owed, the endpoint's change, and its reading moved
/// from `from` to `to`.
public struct WebhookBatch: Sendable, Equatable {
    public var endpointID: Int64
    /// The instance that read it (its right to read the endpoint's log must still hold).
    public var owner: String
    public var from: EventPosition
    public var to: EventPosition
    public var attempts: [WebhookAttempt]
    public var deliveries: [NewWebhookDelivery]
    public var endpointChange: WebhookEndpointChange?
    /// When it is recorded.
    public var nowMilliseconds: Int64

    /// Creates one.
    public init(
        endpointID: Int64, owner: String, from: EventPosition, to: EventPosition, attempts: [WebhookAttempt],
        deliveries: [NewWebhookDelivery], endpointChange: WebhookEndpointChange?, nowMilliseconds: Int64
    ) {
        self.endpointID = endpointID
        self.owner = owner
        self.from = from
        self.to = to
        self.attempts = attempts
        self.deliveries = deliveries
        self.endpointChange = endpointChange
        self.nowMilliseconds = nowMilliseconds
    }
}

/// One attempt at a delivery: when, what came back, how long it took.
public struct WebhookAttempt: Sendable, Equatable {
    /// The delivery (0 for an event sent as it was read from the log, with no delivery of its own).
    public var deliveryID: Int64
    /// The endpoint.
    public var endpointID: Int64
    /// The event.
    public var eventID: Int64
    /// When it started (milliseconds since 1970).
    public var atMilliseconds: Int64
    /// The HTTP status; 0 when none came (refused, timed out, …).
    public var status: Int
    /// How long it took.
    public var durationMilliseconds: Int64
    /// What went wrong, in words (nil for a 2xx).
    public var error: String?

    /// Creates one.
    public init(
        deliveryID: Int64, endpointID: Int64, eventID: Int64, atMilliseconds: Int64, status: Int,
        durationMilliseconds: Int64, error: String?
    ) {
        self.deliveryID = deliveryID
        self.endpointID = endpointID
        self.eventID = eventID
        self.atMilliseconds = atMilliseconds
        self.status = status
        self.durationMilliseconds = durationMilliseconds
        self.error = error
    }
}

/// An attempt's consequence for its delivery.
public struct WebhookResult: Sendable, Equatable {
    /// What became of the delivery.
    public enum Outcome: Sendable, Equatable {
        /// A 2xx: done.
        case delivered
        /// Try again at this time.
        case retry(atMilliseconds: Int64)
        /// The retry schedule is over: failed.
        case gaveUp
    }

    public var attempt: WebhookAttempt
    public var outcome: Outcome
    /// The endpoint's change, if the attempt made one (failing since, answering again, disabled).
    public var endpointChange: WebhookEndpointChange?

    /// Creates one.
    public init(attempt: WebhookAttempt, outcome: Outcome, endpointChange: WebhookEndpointChange?) {
        self.attempt = attempt
        self.outcome = outcome
        self.endpointChange = endpointChange
    }
}
