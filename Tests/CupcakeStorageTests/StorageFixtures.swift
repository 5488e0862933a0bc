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
