import CupcakeDomain

/// Reading an order's history from its rows in `order_events`, the same on both engines.
enum StatusHistory {
    /// The history as kept: the events up to the order's `version` (a change committed after
    /// the order was read is left out, so history and order agree), oldest first, beginning
    /// with the placement (an order from before events were kept has none: it is made up from
    /// the order's creation time).
    static func history(
        of order: StoredOrder, events: [(version: Int64, change: StatusChange)]
    ) -> [StatusChange] {
        var history = events.filter { $0.version <= order.version }.map(\.change)
        if history.first?.status != .placed {
            history.insert(
                StatusChange(status: .placed, atMilliseconds: order.createdAtMilliseconds, actor: .customer), at: 0)
        }
        return history
    }

    /// An event's change from its stored columns; nil for a status or actor this build does not
    /// know (written by a newer one).
    static func change(status: String, atMilliseconds: Int64, actor: String, reason: String?) -> StatusChange? {
        guard let status = OrderStatus(wireName: status), let actor = OrderActor(rawValue: actor) else { return nil }
        return StatusChange(status: status, atMilliseconds: atMilliseconds, actor: actor, reason: reason)
    }
}
