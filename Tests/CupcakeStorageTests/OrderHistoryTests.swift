import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeStorage

/// Listing against a real SQLite file, checked against a plain Swift model of the same rules.
@Suite struct OrderHistoryTests {
    /// A store seeded with orders whose names, types, favourites and times vary, including
    /// several placed in the same millisecond.
    final class Fixture: @unchecked Sendable {
        let directory: TemporaryDirectory
        let store: SQLiteOrderStore
        var stored: [StoredOrder] = []

        init(count: Int = 60) throws {
            directory = try TemporaryDirectory()
            store = try SQLiteOrderStore(path: directory.path("orders.sqlite"))
            let names = [
                "Ann", "anna", "Bob", "bobby", "Zoë", "zoe", "100% Pure", "a_b", "ab", "Éclair", "éclair fan", "%x",
            ]
            var batch: [NewOrder] = []
            for index in 0..<count {
                let order = Order(
                    type: index % 4, quantity: 3 + index % 18, specialRequestEnabled: index % 3 == 0,
                    extraFrosting: index % 3 == 0, name: names[index % names.count], streetAddress: "1 Main",
                    city: "Town", zip: "00001")
                // Three orders share each millisecond.
                batch.append(
                    NewOrder(
                        order: order, costCents: order.costCents,
                        createdAtMilliseconds: 1_700_000_000_000 + Int64(index / 3)))
            }
            stored = try store.insert(batch)
            for order in stored where order.id % 5 == 0 {
                _ = try store.setFavorite(id: order.id, true)
            }
            stored = try stored.map { try #require(try store.order(id: $0.id)) }
        }

        /// The reference: filter and sort in Swift by the rules of the issue.
        func expected(_ query: OrderQuery) -> [StoredOrder] {
            var orders = stored
            if let prefix = query.namePrefix {
                orders = orders.filter { $0.order.name.lowercased().hasPrefix(prefix.lowercased()) }
            }
            if let type = query.type { orders = orders.filter { $0.order.type == type } }
            if let favorite = query.favorite { orders = orders.filter { $0.isFavorite == favorite } }
            orders.sort { a, b in
                func key(_ o: StoredOrder) -> String {
                    switch query.sort.key {
                    case .createdAt: String(format: "%020lld", o.createdAtMilliseconds)
                    case .name: o.order.name.lowercased()
                    case .cost: String(format: "%020d", o.costCents)
                    case .type: String(o.order.type)
                    }
                }
                let (ka, kb) = (key(a), key(b))
                if ka != kb {
                    return query.sort.descending
                        ? ka.utf8.lexicographicallyPrecedes(kb.utf8) == false
                        : ka.utf8.lexicographicallyPrecedes(kb.utf8)
                }
                return query.sort.descending ? a.id > b.id : a.id < b.id
            }
            return orders
        }
    }

    static let prefixes: [String?] = [nil, "a", "ANN", "bob", "zo", "100%", "a_", "%", "é", "Éclair f", "nobody"]
    static let types: [Int?] = [nil, 0, 2]
    static let favorites: [Bool?] = [nil, true, false]

    @Test func everyFilterCombinationMatchesTheModel() throws {
        let fixture = try Fixture()
        for prefix in Self.prefixes {
            for type in Self.types {
                for favorite in Self.favorites {
                    let query = OrderQuery(namePrefix: prefix, type: type, favorite: favorite, limit: 1000)
                    let page = try fixture.store.list(query)
                    let expected = fixture.expected(query)
                    #expect(page.orders.map(\.id) == expected.map(\.id), "\(query)")
                    #expect(page.total == expected.count, "\(query)")
                    var small = query
                    small.limit = 3
                    small.offset = 2
                    #expect(
                        try fixture.store.list(small).orders.map(\.id)
                            == Array(expected.dropFirst(2).prefix(3)).map(\.id), "\(small)")
                }
            }
        }
    }

    @Test func smallPagesOfABroadPrefixWalkTheSortIndexAndAgreeWithTheModel() throws {
        let fixture = try Fixture(count: 240)
        for sort in [
            OrderQuery.Sort.newestFirst, OrderQuery.Sort(.createdAt, descending: false),
            OrderQuery.Sort(.cost, descending: true), OrderQuery.Sort(.type, descending: false),
        ] {
            for offset in [0, 1, 5, 40] {
                let query = OrderQuery(namePrefix: "a", favorite: nil, sort: sort, limit: 2, offset: offset)
                let expected = fixture.expected(query)
                #expect(
                    try fixture.store.list(query).orders.map(\.id)
                        == Array(expected.dropFirst(offset).prefix(2)).map(\.id), "\(sort) \(offset)")
            }
        }
        // "a" matches a third of the names: a 2-order page walks the primary key (time order).
        let plan = try fixture.store.explain(OrderQuery(namePrefix: "a", limit: 2))
        #expect(plan == ["SCAN orders"], "\(plan)")
        // A rare prefix takes the name range.
        let rare = try fixture.store.explain(OrderQuery(namePrefix: "zoë", limit: 2))
        #expect(rare.contains { $0.contains("orders_by_name") }, "\(rare)")
    }

    @Test(arguments: OrderQuery.SortKey.allCases)
    func eachSortKeyInBothDirectionsIsStable(key: OrderQuery.SortKey) throws {
        let fixture = try Fixture()
        for descending in [false, true] {
            let query = OrderQuery(sort: OrderQuery.Sort(key, descending: descending), limit: 1000)
            #expect(
                try fixture.store.list(query).orders.map(\.id) == fixture.expected(query).map(\.id), "\(query.sort)")
        }
    }

    @Test func theDefaultSortIsPlacedOrdersNaturalOrder() throws {
        let fixture = try Fixture()
        let listed = try fixture.store.list(OrderQuery(limit: 1000)).orders.map(\.placed)
        #expect(listed == fixture.stored.map(\.placed).sorted())
        // Same millisecond: the later placed comes first.
        #expect(listed[0].createdAtMilliseconds == listed[1].createdAtMilliseconds)
        #expect(Int(listed[0].id) ?? 0 > Int(listed[1].id) ?? 0)
    }

    @Test func pagingWalksTheWholeListExactlyOnce() throws {
        let fixture = try Fixture(count: 20)
        var seen: [Int64] = []
        for page in 0..<4 {
            let result = try fixture.store.list(OrderQuery(limit: 6, offset: page * 6))
            #expect(result.total == 20)
            seen += result.orders.map(\.id)
            #expect(result.orders.count == (page < 3 ? 6 : 2))
        }
        #expect(seen == fixture.expected(OrderQuery()).map(\.id))
        #expect(try fixture.store.list(OrderQuery(limit: 6, offset: 24)).orders.isEmpty)
    }

    @Test func patternCharactersInAPrefixAreLiteral() throws {
        let fixture = try Fixture()
        let percent = try fixture.store.list(OrderQuery(namePrefix: "100%", limit: 100)).orders
        #expect(!percent.isEmpty)
        #expect(percent.allSatisfy { $0.order.name == "100% Pure" })
        let underscore = try fixture.store.list(OrderQuery(namePrefix: "a_", limit: 100)).orders
        #expect(!underscore.isEmpty)
        #expect(underscore.allSatisfy { $0.order.name == "a_b" })
    }

    @Test func favouritesAndCancellationKeepTheCountsRight() throws {
        let fixture = try Fixture(count: 12)
        let before = try fixture.store.list(OrderQuery(favorite: true)).total
        let target = try #require(fixture.stored.first { !$0.isFavorite })
        #expect(try fixture.store.setFavorite(id: target.id, true)?.isFavorite == true)
        #expect(try fixture.store.list(OrderQuery(favorite: true)).total == before + 1)
        #expect(try fixture.store.setFavorite(id: target.id, true)?.isFavorite == true)  // idempotent
        #expect(try fixture.store.list(OrderQuery(favorite: true)).total == before + 1)
        #expect(try fixture.store.cancel(id: target.id))
        #expect(try fixture.store.order(id: target.id)?.status == .cancelled, "kept, cancelled")
        #expect(try !fixture.store.cancel(id: target.id))
        #expect(try fixture.store.setFavorite(id: target.id, false)?.isFavorite == false)
        #expect(try fixture.store.list(OrderQuery(favorite: true)).total == before)
        #expect(try fixture.store.orderCount() == 11)
        #expect(try !fixture.store.list(OrderQuery(limit: 100)).orders.contains { $0.id == target.id })
        let cancelled = try fixture.store.list(OrderQuery(statuses: [.cancelled], limit: 100))
        #expect(cancelled.orders.map(\.id) == [target.id])
        #expect(cancelled.total == 1)
    }

    struct PlanCase: Sendable, CustomTestStringConvertible {
        var query: OrderQuery
        /// The index the plan must use, or `nil` for a walk of the primary key.
        var index: String?
        /// Whether the plan may sort (only a name range sorted by something else does).
        var sorts: Bool
        var testDescription: String {
            "\(query.namePrefix ?? "-") \(query.type.map(String.init) ?? "-") \(query.favorite.map(String.init) ?? "-") \(query.sort)"
        }
    }

    @Test(arguments: [
        PlanCase(query: OrderQuery(namePrefix: "ann", limit: 100), index: "orders_by_name", sorts: true),
        PlanCase(
            query: OrderQuery(namePrefix: "ann", favorite: true, limit: 100), index: "orders_by_name", sorts: true),
        PlanCase(
            query: OrderQuery(namePrefix: "ann", sort: OrderQuery.Sort(.name, descending: false)),
            index: "orders_by_name", sorts: false),
        PlanCase(query: OrderQuery(favorite: true), index: "orders_favorites", sorts: false),
        PlanCase(query: OrderQuery(type: 2), index: "orders_by_type", sorts: false),
        PlanCase(query: OrderQuery(), index: nil, sorts: false),
        PlanCase(query: OrderQuery(sort: OrderQuery.Sort(.createdAt, descending: false)), index: nil, sorts: false),
        PlanCase(
            query: OrderQuery(sort: OrderQuery.Sort(.cost, descending: true)), index: "orders_by_cost", sorts: false),
        PlanCase(
            query: OrderQuery(sort: OrderQuery.Sort(.name, descending: true)), index: "orders_by_name", sorts: false),
        PlanCase(
            query: OrderQuery(sort: OrderQuery.Sort(.type, descending: false)), index: "orders_by_type", sorts: false),
    ])
    func eachFilterIsARangeAndEachSortAWalkNotAFullScanAndSort(_ c: PlanCase) throws {
        let fixture = try Fixture(count: 12)
        let plan = try fixture.store.explain(c.query)
        if let index = c.index {
            #expect(plan.contains { $0.contains("INDEX \(index)") }, "\(plan)")
        } else {
            // The primary key, walked in order; LIMIT stops it after a page.
            #expect(plan == ["SCAN orders"], "\(plan)")
        }
        // A filter is a range of its index (favourites: the partial index holds only them).
        if c.query.namePrefix != nil || c.query.type != nil {
            #expect(plan.contains { $0.hasPrefix("SEARCH") }, "a range scan: \(plan)")
        }
        #expect(plan.contains { $0.contains("TEMP B-TREE") } == c.sorts, "\(plan)")
    }
}

@Suite struct MigrationTests {
    @Test func aVersion1DatabaseIsMigratedWithItsOrders() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.sqlite")
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute(SQLiteSchema.migrations[0].sql)
            try connection.execute(
                """
                INSERT INTO orders (type, quantity, special_request_enabled, extra_frosting, add_sprinkles, name,
                    street_address, city, zip, cost_cents, created_at_ms, is_favorite)
                VALUES (1, 3, 0, 0, 0, 'Ärger Ann', 's', 'c', 'z', 650, 1, 1), (2, 4, 0, 0, 0, 'bob', 's', 'c', 'z', 900, 2, 0)
                """)
            connection.close()
        }
        let store = try SQLiteOrderStore(path: path)
        #expect(try store.schemaVersion() == SQLiteOrderStore.latestSchemaVersion)
        #expect(try store.list(OrderQuery(namePrefix: "äR")).orders.map(\.order.name) == ["Ärger Ann"])
        #expect(try store.list(OrderQuery(favorite: true)).total == 1)
        #expect(try store.orderCount() == 2)
    }

    @Test func aNewerSchemaIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("future.sqlite")
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA user_version = 99")
            connection.close()
        }
        #expect(throws: StorageError.self) { try SQLiteOrderStore(path: path) }
    }
}

@Suite struct IdempotencyKeyStorageTests {
    @Test func keysOlderThanTheCutoffAreForgottenAndNewerOnesKept() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteOrderStore(path: directory.path("orders.sqlite"))
        let order = Order(type: 1, quantity: 3, name: "A", streetAddress: "B", city: "C", zip: "D")
        func claim(_ key: String) -> IdempotencyClaim {
            IdempotencyClaim(key: key, fingerprint: order.wireJSON, status: 201) { _ in Array("{}".utf8) }
        }
        let hour: Int64 = 3_600_000
        let now: Int64 = 1_800_000_000_000
        _ = try store.insert([
            NewOrder(
                order: order, costCents: order.costCents, createdAtMilliseconds: now - 49 * hour,
                idempotency: claim("old")),
            NewOrder(
                order: order, costCents: order.costCents, createdAtMilliseconds: now - 25 * hour,
                idempotency: claim("day-old")),
        ])
        #expect(try store.purgeIdempotencyKeys(recordedBefore: now - 48 * hour) == 1)
        #expect(try store.idempotencyRecord(key: "old") == nil)
        #expect(try store.idempotencyRecord(key: "day-old")?.status == 201)
        // The orders themselves stay.
        #expect(try store.orderCount() == 2)
    }
}

@Suite struct PlacementOrderTests {
    @Test func aClockSteppingBackCannotReorderTheHistory() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteOrderStore(path: directory.path("orders.sqlite"))
        let order = Order(type: 1, quantity: 3, name: "A", streetAddress: "B", city: "C", zip: "D")
        let first = try store.insert([NewOrder(order: order, costCents: order.costCents, createdAtMilliseconds: 5_000)])
        // The clock went back a second: the later order still sorts as the newer one.
        let second = try store.insert([NewOrder(order: order, costCents: order.costCents, createdAtMilliseconds: 4_000)]
        )
        #expect(second[0].createdAtMilliseconds == 5_000)
        #expect(second[0].id > first[0].id)
        let listed = try store.list(OrderQuery()).orders.map(\.id)
        #expect(listed == [second[0].id, first[0].id])
        let natural = try store.list(OrderQuery(limit: 10)).orders.map(\.placed).sorted().compactMap { Int64($0.id) }
        #expect(listed == natural)
        // And it survives reopening.
        store.close()
        let reopened = try SQLiteOrderStore(path: directory.path("orders.sqlite"))
        let third = try reopened.insert([NewOrder(order: order, costCents: order.costCents, createdAtMilliseconds: 1)])
        #expect(third[0].createdAtMilliseconds == 5_000)
    }
}

@Suite struct WALTests {
    @Test func theWALStaysBoundedUnderContinuousWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let store = try SQLiteOrderStore(path: path, walRestartFrames: 256)
        let order = Order(
            type: 2, quantity: 5, name: "Taylor Swift", streetAddress: "1 Main St", city: "Nashville", zip: "37201")
        func size(_ file: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.intValue ?? 0
        }
        // Write without pause for 4 s (bounded), as a saturated server does, and watch the WAL.
        let started = Date()
        var written = 0
        var commits = 0
        while Date().timeIntervalSince(started) < 4 && written < 2_000_000 {
            let batch = (0..<20).map { _ in NewOrder(order: order, costCents: order.costCents, createdAtMilliseconds: 1)
            }
            written += try store.insert(batch).count
            commits += 1
        }
        let end = size(path + "-wal")
        // Each commit appends at least four pages (the table's and three indexes'), so a WAL that
        // were never started over would hold at least that much (before the fix it grew by 2 GB
        // in 20 s). Reused from its start once checkpointed, it stays a fraction of it, even when
        // a busy machine delays the checkpoint thread.
        let neverRestarted = commits * 4 * (4096 + 24)
        #expect(end > 0)
        #expect(end < neverRestarted / 2, "WAL is \(end) bytes after \(commits) commits (\(written) orders)")
        store.close()
    }
}

/// One transaction inserts a batch with a few multi-row statements (32, 16, 8, 4, 2, 1 rows).
@Suite struct BatchInsertTests {
    @Test(arguments: [1, 2, 3, 7, 13, 31, 32, 33, 70])
    func aBatchGetsConsecutiveIdsInItsOrder(size: Int) throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteOrderStore(path: directory.path("orders.sqlite"))
        defer { store.close() }
        let before = try store.insert(StorageFixtures.newOrders(0..<1))
        let batch = StorageFixtures.newOrders(1..<1 + size)
        let stored = try store.insert(batch)
        #expect(stored.map(\.id) == Array(before[0].id + 1...before[0].id + Int64(size)))
        #expect(stored.map(\.order) == batch.map(\.order))
        for order in stored {
            #expect(try store.order(id: order.id) == order)
        }
        #expect(try store.orderCount() == size + 1)
    }

    @Test func cancellingTheNewestOrderKeepsItAndItsId() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let store = try SQLiteOrderStore(path: path)
        let first = try store.insert(StorageFixtures.newOrders(0..<2))
        #expect(try store.cancel(id: first[1].id))
        let next = try store.insert(StorageFixtures.newOrders(2..<3))
        #expect(next[0].id == first[1].id + 1)
        #expect(try store.order(id: first[1].id)?.status == .cancelled)
        // Again, with a restart between the cancel and the next order.
        #expect(try store.cancel(id: next[0].id))
        store.close()
        let reopened = try SQLiteOrderStore(path: path)
        defer { reopened.close() }
        let afterRestart = try reopened.insert(StorageFixtures.newOrders(3..<4))
        #expect(afterRestart[0].id == next[0].id + 1)
        #expect(try reopened.order(id: next[0].id)?.status == .cancelled)
    }

    @Test func aFailedBatchLeavesTheNumberingAndCountsAsTheDatabaseHasThem() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteOrderStore(path: directory.path("orders.sqlite"))
        defer { store.close() }
        let key = IdempotencyClaim(key: "k", fingerprint: [1], status: 201) { _ in [] }
        var batch = StorageFixtures.newOrders(0..<3)
        batch[0].idempotency = key
        batch[2].idempotency = key  // the same key twice: the whole transaction fails
        #expect(throws: StorageError.self) { try store.insert(batch) }
        #expect(try store.orderCount() == 0)
        let stored = try store.insert(StorageFixtures.newOrders(0..<2))
        #expect(stored.map(\.id) == [1, 2])
        #expect(try store.orderCount() == 2)
    }
}

@Suite struct SQLTextTests {
    @Test func repeatingValuesRepeatsTheLastGroupInPlace() {
        let one = SQLText("INSERT INTO t (a, b) VALUES (?, ?)")
        #expect(one.repeatingValues(rows: 1).text == one.text)
        #expect(one.repeatingValues(rows: 3).text == "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?)")
        let returning = SQLText("INSERT INTO t (a) VALUES (?) RETURNING a")
        #expect(returning.repeatingValues(rows: 2).text == "INSERT INTO t (a) VALUES (?), (?) RETURNING a")
    }
}
