import CupcakeDomain
import CupcakeStorage

/// Orders made up for the storage tests.
enum StorageFixtures {
    static func order(_ number: Int) -> Order {
        Order(
            type: number % 4, quantity: 3 + number % 18, name: "Customer \(number)", streetAddress: "\(number) Main St",
            city: "Nashville", zip: "37201")
    }

    static func newOrders(_ range: Range<Int>) -> [NewOrder] {
        range.map { NewOrder(order: order($0), costCents: order($0).costCents, createdAtMilliseconds: Int64($0)) }
    }
}

extension OrderStore {
    /// Marks or unmarks an order as a favourite; the order as it now is, nil when there is none.
    func setFavorite(id: Int64, _ isFavorite: Bool) throws(StorageError) -> StoredOrder? {
        try change(id: id, OrderChange(favorite: isFavorite, atMilliseconds: 1)).order
    }

    /// Cancels an order as the staff would, without a reason; whether it was cancelled now.
    func cancel(id: Int64) throws(StorageError) -> Bool {
        if case .changed = try change(
            id: id, OrderChange(move: StatusMove(to: .cancelled, by: .staff), atMilliseconds: 1))
        {
            return true
        }
        return false
    }
}
