/// One entry of an order's history: the status it reached, when, who moved it, and why (a
/// cancellation's reason).
public struct StatusChange: Sendable, Hashable {
    /// The status reached.
    public var status: OrderStatus
    /// When, in milliseconds since 1970 UTC.
    public var atMilliseconds: Int64
    /// Who moved it.
    public var actor: OrderActor
    /// Why, when a reason was given.
    public var reason: String?

    /// Creates a history entry.
    public init(status: OrderStatus, atMilliseconds: Int64, actor: OrderActor, reason: String? = nil) {
        self.status = status
        self.atMilliseconds = atMilliseconds
        self.actor = actor
        self.reason = reason
    }
}
