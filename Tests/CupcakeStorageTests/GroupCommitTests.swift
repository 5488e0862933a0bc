import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeStorage

/// The group commit on each engine, with as many writers as the engine allows (PostgreSQL: four
/// here, more than the default, so batches overlap often): every order submitted from many
/// threads is answered once, stored once, and counted once, while favourites and cancellations
/// run beside it.
@Suite struct GroupCommitTests {
    /// A store of the engine, and what keeps its database alive.
    struct Subject {
        let store: any OrderStore
        let keepAlive: Any
        let postgres: PostgresDatabase?
    }

    static func subject(_ engine: Engine) throws -> Subject {
        switch engine {
        case .sqlite:
            let directory = try TemporaryDirectory()
            return Subject(
                store: try SQLiteOrderStore(path: directory.path("orders.sqlite")), keepAlive: directory, postgres: nil)
        case .postgres:
            let database = try PostgresFixture.shared.get().newDatabase()
            let store = try PostgresOrderStore(url: database.url, poolSize: 8, concurrentWriters: 4)
            return Subject(store: store, keepAlive: database, postgres: database)
        }
    }

    /// Results handed to completions, kept under a lock.
    final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [Int: Int64] = [:]
        private var failures: [String] = []
        private var duplicates = 0

        func record(_ index: Int, _ result: Result<StoredOrder, StorageError>) {
            lock.withLock {
                switch result {
                case .success(let order):
                    if ids.updateValue(order.id, forKey: index) != nil { duplicates += 1 }
                case .failure(let error):
                    failures.append(error.message)
                }
            }
        }

        var snapshot: (ids: [Int: Int64], failures: [String], duplicates: Int) {
            lock.withLock { (ids, failures, duplicates) }
        }
    }

    @Test(arguments: Engine.allCases)
    func ordersFromManyThreadsAreStoredAndCountedExactlyOnce(_ engine: Engine) throws {
        let subject = try Self.subject(engine)
        let store = subject.store
        let committer = GroupCommitter(store: store)
        let threads = 16
        let perThread = 250
        let total = threads * perThread
        let answers = Answers()
        let group = DispatchGroup()
        // Orders placed earlier, favourited and cancelled while the new ones are committed.
        let earlier = try store.insert(StorageFixtures.newOrders(0..<200))
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                for number in 0..<perThread {
                    let index = thread * perThread + number
                    group.enter()
                    let order = StorageFixtures.order(index)
                    committer.submit(
                        NewOrder(order: order, costCents: order.costCents, createdAtMilliseconds: Int64(index))
                    ) { result in
                        answers.record(index, result)
                        group.leave()
                    }
                }
                group.leave()
            }
        }
        let sideWork = Thread.detachNewThreadResult {
            for order in earlier.prefix(100) { _ = try? store.setFavorite(id: order.id, true) }
            for order in earlier.suffix(50) { _ = try? store.cancel(id: order.id) }
        }
        #expect(group.wait(timeout: .now() + 120) == .success, "every order answered within two minutes")
        sideWork.wait()
        committer.shutdown()

        let (ids, failures, duplicates) = answers.snapshot
        #expect(failures.isEmpty)
        #expect(duplicates == 0, "no completion runs twice")
        #expect(ids.count == total)
        #expect(Set(ids.values).count == total, "no id handed out twice")
        #expect(Set(ids.values).isDisjoint(with: earlier.map(\.id)))

        // Stored once each, and every count agrees with the rows.
        let stored = total + 200 - 50
        #expect(try store.orderCount() == stored)
        #expect(try store.list(OrderQuery(limit: 1)).total == stored)
        #expect(try store.list(OrderQuery(favorite: true)).total == 100)
        var byType = 0
        for type in 0..<4 {
            let page = try store.list(OrderQuery(type: type, limit: 1))
            let expected = (0..<total).filter { $0 % 4 == type }.count + (0..<150).filter { $0 % 4 == type }.count
            #expect(page.total == expected, "type \(type)")
            byType += page.total
        }
        #expect(byType == stored)
        for (index, id) in ids.shuffled().prefix(50) {
            #expect(try store.order(id: id)?.order.name == StorageFixtures.order(index).name)
        }
        if let postgres = subject.postgres {
            // The counts are spread over several rows, so concurrent batches rarely wait for
            // each other's row lock.
            let shards = try postgres.psql("SELECT count(DISTINCT shard) FROM order_counts WHERE n <> 0")
            #expect((Int(shards.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 1)
        }
        store.close()
    }

    /// Favourite, unfavourite and cancel of the same orders from many threads at once: the
    /// counts the totals come from move once per real change (PostgreSQL re-checks a row changed
    /// meanwhile against its new value, not against the statement's snapshot).
    @Test(arguments: Engine.allCases)
    func changesOfOneOrderFromManyThreadsKeepTheCountsRight(_ engine: Engine) throws {
        let subject = try Self.subject(engine)
        let store = subject.store
        let orders = try store.insert(StorageFixtures.newOrders(0..<24))
        let group = DispatchGroup()
        for (index, target) in orders.prefix(12).enumerated() {
            for thread in 0..<6 {
                group.enter()
                Thread.detachNewThread {
                    for round in 0..<5 {
                        if index % 3 == 0 && thread == 5 && round == 2 {
                            _ = try? store.cancel(id: target.id)
                        } else {
                            _ = try? store.setFavorite(id: target.id, (thread + round) % 2 == 0)
                        }
                    }
                    group.leave()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let left = try store.list(OrderQuery(limit: 100)).orders
        #expect(left.count == 20, "4 of the 12 cancelled")
        #expect(try store.orderCount() == left.count)
        #expect(try store.list(OrderQuery(favorite: true)).total == left.filter(\.isFavorite).count)
        #expect(try store.list(OrderQuery(favorite: false)).total == left.filter { !$0.isFavorite }.count)
        for type in 0..<4 {
            #expect(
                try store.list(OrderQuery(type: type, favorite: true)).total
                    == left.filter { $0.order.type == type && $0.isFavorite }.count, "type \(type)")
        }
        store.close()
    }

    /// A batch is one statement: when one of its keys' claims was taken over by another
    /// instance (the claim expired), the statement fails and stores nothing of the batch, and
    /// the group commit then stores each of the other orders alone.
    @Test func aBatchWhoseClaimWasTakenOverStoresNothingAndTheOthersAreStoredAlone() throws {
        let database = try PostgresFixture.shared.get().newDatabase()
        let first = try PostgresOrderStore(url: database.url, poolSize: 3)
        let second = try PostgresOrderStore(url: database.url, poolSize: 3)
        func claim(_ key: String) -> IdempotencyClaim {
            IdempotencyClaim(key: key, fingerprint: Array(key.utf8), status: 201) { Array("order \($0.id)".utf8) }
        }
        #expect(try first.claimIdempotencyKey("K", fingerprint: Array("K".utf8), nowMilliseconds: 1_000) == .claimed)
        // The first instance stalls past its claim; the second takes the key over.
        try database.psql("UPDATE idempotency_keys SET claimed_until_ms = 0 WHERE key = 'K'")
        #expect(try second.claimIdempotencyKey("K", fingerprint: Array("K".utf8), nowMilliseconds: 2_000) == .claimed)

        var batch = StorageFixtures.newOrders(0..<3)
        batch[1].idempotency = claim("K")
        #expect {
            _ = try first.insert(batch)
        } throws: { ($0 as? StorageError)?.code == .conflict }
        #expect(try first.orderCount() == 0, "nothing of the batch stored")
        #expect(try first.list(OrderQuery(limit: 1)).total == 0, "nor counted")
        #expect(try first.idempotencyRecord(key: "K") == nil, "nor answered")

        // Through the group commit: the keyed order fails alone, its neighbours are stored.
        let committer = GroupCommitter(store: first)
        let answers = Answers()
        let group = DispatchGroup()
        for (index, order) in batch.enumerated() {
            group.enter()
            committer.submit(order) { result in
                answers.record(index, result)
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        committer.shutdown()
        let (ids, failures, _) = answers.snapshot
        #expect(Set(ids.keys) == [0, 2])
        #expect(failures.count == 1)
        #expect(try first.orderCount() == 2)

        // The instance holding the claim stores its order with the key.
        var mine = StorageFixtures.newOrders(5..<6)
        mine[0].idempotency = claim("K")
        let stored = try second.insert(mine)
        let record = try #require(try second.idempotencyRecord(key: "K"))
        #expect(record.orderID == stored[0].id && record.status == 201)
        #expect(record.body == Array("order \(stored[0].id)".utf8))
        #expect(try first.orderCount() == 3)
        first.close()
        second.close()
    }

    @Test func aVersion1PostgresDatabaseKeepsItsCountsWhenTheyMoveToShards() throws {
        let database = try PostgresFixture.shared.get().newDatabase()
        try database.psql(PostgresSchema.migrations[0].sql.text)
        try database.psql(
            """
            CREATE TABLE cupcake_schema (version INTEGER NOT NULL, name TEXT NOT NULL);
            INSERT INTO cupcake_schema VALUES (1, 'orders, idempotency keys, counts');
            INSERT INTO orders (type, quantity, special_request_enabled, extra_frosting, add_sprinkles, name,
                street_address, city, zip, cost_cents, created_at_ms, name_key, is_favorite)
            VALUES (1, 3, false, false, false, 'Ann', 's', 'c', 'z', 650, 1, 'ann', true),
                (2, 4, false, false, false, 'Bob', 's', 'c', 'z', 900, 2, 'bob', false);
            UPDATE order_counts SET n = 1 WHERE (type, is_favorite) IN ((1, true), (2, false));
            """)
        let store = try PostgresOrderStore(url: database.url, poolSize: 2)
        #expect(try store.orderCount() == 2)
        #expect(try store.list(OrderQuery(favorite: true)).total == 1)
        #expect(try store.list(OrderQuery(type: 2)).total == 1)
        let added = try store.insert(StorageFixtures.newOrders(2..<3))
        #expect(try store.list(OrderQuery(type: 2)).total == 2)
        #expect(try store.cancel(id: added[0].id))
        #expect(try store.orderCount() == 2)
        let version = try database.psql("SELECT max(version) FROM cupcake_schema")
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(PostgresSchema.migrations.count)")
        store.close()
    }
}

extension Thread {
    /// Runs `body` on a new thread; `wait()` on the result blocks until it has finished.
    fileprivate static func detachNewThreadResult(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            body()
            group.leave()
        }
        return group
    }
}
