import CupcakeDomain

/// One entry of the event log: a status an order reached (its placement included), where it
/// stands in the log, and the order's version it made.
public struct OrderEvent: Sendable, Equatable {
    /// Where it stands in the log.
    public var position: EventPosition
    /// The order.
    public var orderID: Int64
    /// The order's version it made.
    public var version: Int64
    /// The status reached, when, by whom, why.
    public var change: StatusChange

    /// Creates an event.
    public init(position: EventPosition, orderID: Int64, version: Int64, change: StatusChange) {
        self.position = position
        self.orderID = orderID
        self.version = version
        self.change = change
    }
}

/// A place in the event log, in the order events became final: on SQLite the event's id (one
/// writer, so ids are commit order); on PostgreSQL the writing transaction's id and the event's
/// id, read only once every transaction before it has ended (so no earlier event can appear
/// later). Its text is what an SSE message's `id:` carries and `Last-Event-ID` brings back.
public struct EventPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The writing transaction (0 on SQLite).
    public var transaction: Int64
    /// The event's id.
    public var id: Int64

    /// Creates a position.
    public init(transaction: Int64 = 0, id: Int64) {
        self.transaction = transaction
        self.id = id
    }

    /// Before every event.
    public static let start = EventPosition(id: 0)

    /// `42` on SQLite, `1234-42` on PostgreSQL; nil for anything else.
    public init?(text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let numbers = parts.map { part -> Int64? in
            guard !part.isEmpty, part.count <= 19, part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return nil
            }
            return Int64(part)
        }
        switch numbers.count {
        case 1: guard let id = numbers[0] else { return nil }; self.init(id: id)
        case 2:
            guard let transaction = numbers[0], let id = numbers[1] else { return nil }
            self.init(transaction: transaction, id: id)
        default: return nil
        }
    }

    public var description: String { transaction == 0 ? String(id) : "\(transaction)-\(id)" }

    public static func < (lhs: EventPosition, rhs: EventPosition) -> Bool {
        (lhs.transaction, lhs.id) < (rhs.transaction, rhs.id)
    }
}
