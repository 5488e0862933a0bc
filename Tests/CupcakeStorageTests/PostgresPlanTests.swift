import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeStorage

/// PostgreSQL serves each filter and sort from an index: 50,000 orders, `ANALYZE`d, so the
/// planner chooses as it would in a real shop, and every list query's plan checked with EXPLAIN.
@Suite(.serialized) struct PostgresPlanTests {
    /// One database for the whole suite, loaded once.
    final class Loaded: @unchecked Sendable {
        let database: PostgresDatabase
        let store: PostgresOrderStore
        static let count = 50_000

        init() throws {
            database = try PostgresFixture.shared.get().newDatabase()
            store = try PostgresOrderStore(url: database.url, poolSize: 1)
            let names = ["Ann", "Bob", "Chloé", "Dana", "Eve", "Finn", "Gus", "Hana", "Ivo", "Jo", "Kai", "Lea"]
            try store.bulkInsert(
                count: Self.count, batchSize: 10_000,
                make: { index in
                    let order = Order(
                        type: index % 4, quantity: 1 + index % 20, name: "\(names[index % names.count]) \(index)",
                        streetAddress: "1 Main", city: "Town", zip: "00001")
                    return NewOrder(
                        order: order, costCents: order.costCents,
                        createdAtMilliseconds: 1_700_000_000_000 + Int64(index),
                        isFavorite: index % 50 == 0)
                }, progress: { _ in })
            try database.psql("ANALYZE orders")
        }

        static let shared = Result { try Loaded() }
    }

    struct PlanCase: Sendable, CustomTestStringConvertible {
        var query: OrderQuery
        /// The indexes the plan may read (a broad filter may walk the sort's index and filter
        /// as it goes: the page is found after a few dozen rows, as the planner knows from the
        /// statistics).
        var indexes: [String]
        var testDescription: String {
            "\(query.namePrefix ?? "-") \(query.type.map(String.init) ?? "-") \(query.favorite.map(String.init) ?? "-") \(query.sort) after=\(query.after != nil)"
        }
    }

    static func after(_ sort: OrderQuery.Sort, _ value: OrderQuery.Position.Value) -> OrderQuery {
        var query = OrderQuery(sort: sort, limit: 20)
        query.after = OrderQuery.Position(value: value, id: 25_000)
        return query
    }

    static let cases: [PlanCase] = [
        PlanCase(query: OrderQuery(limit: 20), indexes: ["orders_pkey"]),
        PlanCase(
            query: OrderQuery(sort: OrderQuery.Sort(.createdAt, descending: false), limit: 20), indexes: ["orders_pkey"]
        ),
        // A rare prefix reads its range of names; a broad one may walk the time order instead.
        PlanCase(query: OrderQuery(namePrefix: "chloé 4999", limit: 20), indexes: ["orders_by_name"]),
        PlanCase(query: OrderQuery(namePrefix: "chlo", limit: 20), indexes: ["orders_by_name", "orders_pkey"]),
        PlanCase(
            query: OrderQuery(namePrefix: "ann 1", sort: OrderQuery.Sort(.name, descending: false), limit: 20),
            indexes: ["orders_by_name"]),
        PlanCase(query: OrderQuery(type: 2, limit: 20), indexes: ["orders_by_type", "orders_pkey"]),
        PlanCase(
            query: OrderQuery(type: 2, sort: OrderQuery.Sort(.cost, descending: false), limit: 20),
            indexes: ["orders_by_cost", "orders_by_type"]),
        PlanCase(query: OrderQuery(favorite: true, limit: 20), indexes: ["orders_favorites"]),
        PlanCase(
            query: OrderQuery(sort: OrderQuery.Sort(.name, descending: true), limit: 20), indexes: ["orders_by_name"]),
        PlanCase(
            query: OrderQuery(sort: OrderQuery.Sort(.cost, descending: true), limit: 20), indexes: ["orders_by_cost"]),
        PlanCase(
            query: OrderQuery(sort: OrderQuery.Sort(.type, descending: false), limit: 20), indexes: ["orders_by_type"]),
        // A deep page by cursor starts inside the index, not at its beginning.
        PlanCase(query: after(.newestFirst, .number(0)), indexes: ["orders_pkey"]),
        PlanCase(query: after(OrderQuery.Sort(.name, descending: false), .text("eve")), indexes: ["orders_by_name"]),
        PlanCase(query: after(OrderQuery.Sort(.cost, descending: true), .number(900)), indexes: ["orders_by_cost"]),
        PlanCase(query: after(OrderQuery.Sort(.type, descending: false), .number(2)), indexes: ["orders_by_type"]),
    ]

    @Test(arguments: cases)
    func eachFilterAndSortReadsItsIndexNotTheWholeTable(_ c: PlanCase) throws {
        let loaded = try Loaded.shared.get()
        let plan = try loaded.store.explain(c.query)
        let text = plan.joined(separator: "\n")
        #expect(plan.contains { line in line.contains("Index") && c.indexes.contains { line.contains($0) } }, "\(text)")
        #expect(!plan.contains { $0.contains("Seq Scan") }, "\(text)")
        // The page comes off the index in order; only a name range sorted otherwise is sorted.
        if plan.contains(where: { $0.contains("Sort") }) {
            #expect(c.query.namePrefix != nil || c.query.type != nil, "\(text)")
        }
        // The page agrees with what the store lists.
        #expect(try loaded.store.list(c.query).orders.count <= c.query.limit)
    }
}
