/// How webhooks are delivered: the config file's `webhook…` keys.
public struct WebhookSettings: Sendable, Equatable {
    /// Whether receivers at loopback, private, link-local and metadata addresses are allowed
    /// (off: a delivery to one is refused at connect time, after name resolution).
    public var allowPrivateAddresses = false
    /// Multiplies every wait of the retry schedule (``WebhookDispatcher/retrySchedule``): 1 in
    /// production; tests shorten hours to seconds.
    public var retryScale = 1.0
    /// An endpoint whose every attempt has failed for this long is disabled (5 days).
    public var disableAfterSeconds = 5 * 24 * 3600
    /// The most a delivery may take, connecting included.
    public var timeoutSeconds = 15
    /// The most connecting (TLS included) may take.
    public var connectTimeoutSeconds = 5
    /// Deliveries in flight at once, each on its own thread and connection.
    public var workers = 4
    /// How long attempts, and deliveries that are done, are kept for the endpoints' delivery
    /// history (30 days); a delivery still owed is kept whatever its age.
    public var historyDays = 30

    /// The defaults.
    public init() {}
}
