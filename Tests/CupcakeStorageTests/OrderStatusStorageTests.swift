import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Synchronization
import Testing

@testable import CupcakeStorage

/// An order's status on each engine: moves checked against the status the transaction finds,
/// a history written with each move, versions that move with every change, and totals and
/// lists per status that agree with the rows.
@Suite struct OrderStatusStorageTests {
    static func move(_ to: OrderStatus, by actor: OrderActor = .staff, reason: String? = nil, at: Int64 = 5)
        -> OrderChange
    {
        OrderChange(move: StatusMove(to: to, by: actor, reason: reason), atMilliseconds: at)
    }

    @Test(arguments: Engine.allCases)
    func anOrderGoesFromPlacedToDeliveredWithItsHistory(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let order = try #require(try store.insert(StorageFixtures.newOrders(0..<1)).first)
        #expect(order.status == .placed && order.version == 1)
        let placed = try #require(try store.order(id: order.id, history: true))
        #expect(
            placed.history == [
                StatusChange(status: .placed, atMilliseconds: order.createdAtMilliseconds, actor: .customer)
            ])
        var time: Int64 = 1_000
        for status in [OrderStatus.baking, .outForDelivery, .delivered] {
            time += 1_000
            guard case .changed(let moved) = try store.change(id: order.id, Self.move(status, at: time)) else {
                Issue.record("moving to \(status) was not made")
                return
            }
            #expect(moved.status == status)
            #expect(moved.statusChangedAtMilliseconds == time)
            #expect(moved.history?.last == StatusChange(status: status, atMilliseconds: time, actor: .staff))
        }
        let delivered = try #require(try store.order(id: order.id, history: true))
        #expect(delivered.version == 4)
        #expect(delivered.history?.map(\.status) == [.placed, .baking, .outForDelivery, .delivered])
        // Final: nothing follows, and nothing is written.
        guard case .refused(.final(.delivered), let same) = try store.change(id: order.id, Self.move(.cancelled))
        else {
            Issue.record("a delivered order was cancelled")
            return
        }
        #expect(same.version == 4)
        #expect(try store.list(OrderQuery(statuses: [.delivered])).total == 1)
        #expect(try store.list(OrderQuery(statuses: [.placed])).total == 0)
    }

    @Test(arguments: Engine.allCases)
    func aRefusedOrStaleChangeChangesNothing(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let order = try #require(try store.insert(StorageFixtures.newOrders(0..<1)).first)
        let cases: [(OrderChange, String)] = [
            (Self.move(.delivered), "status_move_not_allowed"),
            (Self.move(.baking, by: .customer), "status_move_not_allowed"),
            (Self.move(.placed), "status_unchanged"),
            (Self.move(.cancelled, reason: String(repeating: "x", count: 201)), "reason_too_long"),
            (Self.move(.cancelled, reason: "bad\u{202E}"), "reason_unsafe"),
        ]
        for (change, code) in cases {
            guard case .refused(let refusal, let current) = try store.change(id: order.id, change) else {
                Issue.record("\(change) was not refused")
                continue
            }
            #expect(refusal.code == code)
            #expect(current.version == 1 && current.status == .placed)
        }
        var stale = Self.move(.baking)
        stale.expectedVersions = [2]
        guard case .versionMismatch(let current) = try store.change(id: order.id, stale) else {
            Issue.record("a stale change was made")
            return
        }
        #expect(current.version == 1)
        #expect(try store.order(id: order.id, history: true)?.history?.count == 1)
        #expect(try store.change(id: order.id + 100, Self.move(.baking)) == .notFound)
        // A favourite mark moves the version but writes no history.
        guard case .changed(let marked) = try store.change(id: order.id, OrderChange(favorite: true, atMilliseconds: 9))
        else {
            Issue.record("the favourite mark was not set")
            return
        }
        #expect(marked.version == 2 && marked.history?.count == 1 && marked.status == .placed)
        // Cancelling a started order needs the staff and a reason; it is kept, with the reason.
        _ = try store.change(id: order.id, Self.move(.baking))
        guard case .refused(.reasonRequired, _) = try store.change(id: order.id, Self.move(.cancelled)) else {
            Issue.record("cancelled without a reason")
            return
        }
        guard
            case .changed(let cancelled) = try store.change(
                id: order.id, Self.move(.cancelled, reason: "  oven broke "))
        else {
            Issue.record("not cancelled with a reason")
            return
        }
        #expect(cancelled.history?.last?.reason == "oven broke")
        #expect(try store.list(OrderQuery()).total == 0)
        #expect(try store.list(OrderQuery(statuses: [.cancelled])).orders.map(\.id) == [order.id])
    }

    /// 16 threads move 2,000 orders at random, half of the moves pinned to the version they
    /// read: no update is lost (each order's version is one more than the changes made to it),
    /// every history is a path the model allows, and the totals per status agree with the rows.
    @Test(arguments: Engine.allCases)
    func concurrentMovesLoseNoUpdateAndLeaveValidHistories(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let orders = try store.insert(StorageFixtures.newOrders(0..<2_000))
        let ids = orders.map(\.id)
        let made = Mutex([Int64: Int]())
        let failures = Mutex([String]())
        let results = Parallel.run(16, timeout: 240) { client -> Int in
            var random = SplitMix64(seed: UInt64(client + 1))
            var attempts = 0
            for _ in 0..<200 {
                // A few hot orders and many cold ones, so that moves of one order meet often.
                let id = ids[Int(random.next() % (random.next() % 2 == 0 ? 40 : UInt64(ids.count)))]
                let target = OrderStatus.allCases[Int(random.next() % 5)]
                var change = Self.move(target, reason: target == .cancelled ? "client \(client)" : nil, at: 10)
                if random.next() % 2 == 0 {
                    guard let seen = try? store.order(id: id) else { continue }
                    change.expectedVersions = [seen.version]
                }
                attempts += 1
                do {
                    if case .changed = try store.change(id: id, change) { made.withLock { $0[id, default: 0] += 1 } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            return attempts
        }
        #expect(results.compactMap { $0 }.count == 16, "every client finished")
        #expect(failures.withLock { $0 }.isEmpty)
        let changes = made.withLock { $0 }
        #expect(changes.values.reduce(0, +) > 100, "enough moves were made to mean something")
        var byStatus: [OrderStatus: Int] = [:]
        for id in ids {
            let order = try #require(try store.order(id: id, history: true))
            let history = try #require(order.history)
            #expect(order.version == 1 + Int64(changes[id] ?? 0), "order \(id): no lost update")
            #expect(history.count == 1 + (changes[id] ?? 0))
            #expect(history.last?.status == order.status)
            for (from, to) in zip(history, history.dropFirst()) {
                #expect(
                    StatusMove(to: to.status, by: to.actor, reason: to.reason).refusal(from: from.status) == nil,
                    "order \(id): \(from.status) → \(to.status)")
            }
            byStatus[order.status, default: 0] += 1
        }
        for status in OrderStatus.allCases {
            #expect(try store.list(OrderQuery(statuses: [status])).total == byStatus[status] ?? 0, "\(status)")
        }
        #expect(try store.orderCount() == ids.count - (byStatus[.cancelled] ?? 0))
    }

    /// A few orders of one status among many are taken from the status index; the status most
    /// orders have is read walking by time, which is cheaper than taking them all and sorting.
    @Test func aFewOrdersOfOneStatusAreReadFromTheStatusIndex() throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteOrderStore(path: directory.path("orders.sqlite"))
        defer { store.close() }
        let orders = try store.insert(StorageFixtures.newOrders(0..<500))
        for order in orders.prefix(3) { _ = try store.change(id: order.id, Self.move(.baking)) }
        let few = OrderQuery(statuses: [.baking], limit: 10)
        #expect(try store.explain(few).joined(separator: "; ").contains("orders_by_status"))
        #expect(try store.list(few).orders.map(\.id) == orders.prefix(3).reversed().map(\.id))
        let many = OrderQuery(statuses: [.placed], limit: 10)
        #expect(try !store.explain(many).joined(separator: "; ").contains("orders_by_status"))
        #expect(try store.list(many).orders.map(\.id) == orders.suffix(10).reversed().map(\.id))
        #expect(try store.list(many).total == 497)
    }
}
