/// A receiver of the service's events: where they go, which ones, the secret that signs them and
/// how delivering to it has gone.
public struct WebhookEndpoint: Sendable, Equatable {
    /// The endpoint's id.
    public var id: Int64
    /// Where deliveries are POSTed (http or https).
    public var url: String
    /// The event types it receives (`order.placed`, …); empty for every type.
    public var eventTypes: [String]
    /// The signing secret (`whsec_` and base64).
    public var secret: String
    /// The secret before the last rotation, still signing until ``previousSecretUntilMilliseconds``.
    public var previousSecret: String?
    /// Until when the previous secret signs too (milliseconds since 1970).
    public var previousSecretUntilMilliseconds: Int64?
    /// Whether deliveries are made.
    public var enabled: Bool
    /// Why it was disabled, when it was (`"410 Gone"`, `"failing since …"`, `"by the staff"`).
    public var disabledReason: String?
    /// Since when every attempt has failed (nil while it answers 2xx).
    public var failingSinceMilliseconds: Int64?
    /// When it was made.
    public var createdAtMilliseconds: Int64
    /// How far its deliveries have read the event log: every event up to here was delivered to it
    /// or became one of its deliveries (those still owed are retried from there).
    public var position: EventPosition

    /// Creates an endpoint's value.
    public init(
        id: Int64, url: String, eventTypes: [String], secret: String, previousSecret: String? = nil,
        previousSecretUntilMilliseconds: Int64? = nil, enabled: Bool = true, disabledReason: String? = nil,
        failingSinceMilliseconds: Int64? = nil, createdAtMilliseconds: Int64, position: EventPosition = .start
    ) {
        self.id = id
        self.url = url
        self.eventTypes = eventTypes
        self.secret = secret
        self.previousSecret = previousSecret
        self.previousSecretUntilMilliseconds = previousSecretUntilMilliseconds
        self.enabled = enabled
        self.disabledReason = disabledReason
        self.failingSinceMilliseconds = failingSinceMilliseconds
        self.createdAtMilliseconds = createdAtMilliseconds
        self.position = position
    }

    /// Whether it receives events of `type`.
    public func receives(_ type: String) -> Bool { eventTypes.isEmpty || eventTypes.contains(type) }

    /// Whether it receives an event of `type` made at `atMilliseconds`: one it subscribes to, made
    /// since the endpoint was.
    public func receives(_ type: String, atMilliseconds: Int64) -> Bool {
        receives(type) && createdAtMilliseconds <= atMilliseconds
    }

    /// The secrets that sign a delivery made at `now`: the current one, and the previous one
    /// during its grace period.
    public func signingSecrets(nowMilliseconds now: Int64) -> [String] {
        guard let previousSecret, let until = previousSecretUntilMilliseconds, now < until else { return [secret] }
        return [secret, previousSecret]
    }

    /// The event types as stored: space-separated.
    var storedEventTypes: String { eventTypes.joined(separator: " ") }

    /// Event types from their stored form.
    static func eventTypes(stored: String) -> [String] { stored.split(separator: " ").map(String.init) }
}

/// A change to an endpoint: enable or disable it, or rotate its secret.
public enum WebhookEndpointChange: Sendable, Equatable {
    /// Enabled again (its failures forgotten, and what happened while it was disabled skipped:
    /// its reading of the log moves to the log's end), or disabled with a reason.
    case enabled(Bool, reason: String?)
    /// A new secret; the old one keeps signing until `previousUntilMilliseconds`.
    case rotated(secret: String, previousUntilMilliseconds: Int64)
    /// Failing since a time (the first failure after a success), or answering again (nil).
    case failing(sinceMilliseconds: Int64?)
}
