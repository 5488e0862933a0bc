// cupcake-seed: bulk-loads generated orders for scripts/bench.
//
//   cupcake-seed --database PATH|URL --count N
//
// Adds N orders to the database (a SQLite file, created if needed, or a PostgreSQL URL) in transactions of 50,000, printing a
// progress line. Names are "First Last" from 200 × 500 names, so a customer's full-name prefix
// matches about N / 100,000 orders; 5% are favourites; types are uniform; times are one
// millisecond apart, continuing after what is already there.
import CupcakeDomain
import CupcakeStorage
import CupcakeTestSupport
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("cupcake-seed: \(message)\n".utf8))
    exit(64)
}

var database: String?
var count: Int?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--database": database = arguments.popFirst()
    case "--count": count = arguments.popFirst().flatMap(Int.init)
    default: fail("unknown argument \(argument); usage: cupcake-seed --database PATH --count N")
    }
}
guard let database, let count, count > 0 else { fail("usage: cupcake-seed --database PATH --count N") }

let firstNames = (0..<200).map { "First\($0)" } + ["Taylor"]
let lastNames = (0..<500).map { "Last\($0)" } + ["Swift"]

do {
    let store = try OrderStores.open(database, options: OrderStores.Options(poolSize: 1))
    let existing = try store.orderCount()
    var random = SplitMix64(seed: UInt64(existing) &+ 42)
    let start = Date()
    let base: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    try store.bulkInsert(
        count: count, batchSize: 50_000,
        make: { index in
            let n = existing + index
            let first = firstNames[Int(random.next() % UInt64(firstNames.count - 1))]
            let last = lastNames[Int(random.next() % UInt64(lastNames.count - 1))]
            // Every 100,000th order is Taylor Swift's, so her prefix matches N / 100,000 orders.
            let name = n % 100_000 == 7 ? "Taylor Swift" : "\(first) \(last)"
            let frosting = random.next() % 3 == 0
            let order = Order(
                type: Int(random.next() % 4), quantity: 3 + Int(random.next() % 18), specialRequestEnabled: frosting,
                extraFrosting: frosting, name: name, streetAddress: "\(n % 999 + 1) Main St", city: "Nashville",
                zip: "37201")
            return NewOrder(
                order: order, costCents: order.costCents, createdAtMilliseconds: base + Int64(n),
                isFavorite: random.next() % 20 == 0)
        },
        progress: { loaded in
            if loaded % 100_000 == 0 || loaded == count {
                let rate = Double(loaded) / max(Date().timeIntervalSince(start), 0.001)
                print("seeded \(loaded)/\(count) orders (\(Int(rate)) orders/s)")
            }
        })
    store.close()
} catch {
    fail("\(error)")
}
