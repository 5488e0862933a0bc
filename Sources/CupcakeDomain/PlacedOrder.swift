/// An order an endpoint has accepted: the order with its id, time, price and favourite mark.
///
/// Its natural order (`Comparable`) is the history's default sort, newest placed first, with
/// ties broken by the id (later ids first), so the CLI and the server list orders alike.
public struct PlacedOrder: Sendable, Hashable, Comparable {
    /// The order.
    public var order: Order
    /// The endpoint's id for it.
    public var id: String
    /// When it was placed, in milliseconds since 1970 UTC.
    public var createdAtMilliseconds: Int64
    /// Its price in cents.
    public var costCents: Int
    /// Whether it is marked as a favourite.
    public var isFavorite: Bool

    /// Creates a placed order.
    public init(order: Order, id: String, createdAtMilliseconds: Int64, costCents: Int, isFavorite: Bool = false) {
        self.order = order
        self.id = id
        self.createdAtMilliseconds = createdAtMilliseconds
        self.costCents = costCents
        self.isFavorite = isFavorite
    }

    /// `a < b` when `a` comes first in the default listing: placed later, or at the same
    /// millisecond with the later id.
    public static func < (a: PlacedOrder, b: PlacedOrder) -> Bool {
        if a.createdAtMilliseconds != b.createdAtMilliseconds {
            return a.createdAtMilliseconds > b.createdAtMilliseconds
        }
        return idPrecedes(b.id, a.id)
    }

    /// Compares ids numerically when both are numbers ("9" before "10"), else as text.
    static func idPrecedes(_ x: String, _ y: String) -> Bool {
        if let a = Int64(x), let b = Int64(y) { return a < b }
        return x < y
    }
}
