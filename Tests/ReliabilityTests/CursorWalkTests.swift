import CupcakeDomain
import CupcakeStorage
import CupcakeTestSupport
import Foundation
import Testing

/// Deep paging: `page` stops at 10,000 orders deep, and `next_cursor` walks the rest at the cost
/// of the first page (an index seek, not OFFSET), seeing each order once while orders are added.
@Suite struct CursorWalkTests {
    /// Follows `next_cursor` from `firstPath` to the end over one kept-alive connection (with
    /// the staff key); returns every id seen and each page's time in seconds.
    static func walk(port: Int, firstPath: String, key: String) throws -> (ids: [Int], seconds: [Double]) {
        var socket = try TestSocket(port: port, timeout: 30)
        var path: String? = firstPath
        var ids: [Int] = []
        var seconds: [Double] = []
        // Bounded: 10,100 pages of 100 is more than the table holds.
        for _ in 0..<10_100 {
            guard let next = path else { break }
            let started = DispatchTime.now().uptimeNanoseconds
            try socket.send(Data("GET \(next) HTTP/1.1\r\nHost: localhost\r\nx-api-key: \(key)\r\n\r\n".utf8))
            let answer = socket.receiveResponse(deadline: Date().addingTimeInterval(30))
            guard let response = answer, response.status == 200, let json = response.json,
                let data = json["data"] as? [[String: Any]]
            else {
                throw TestSocketError(
                    message:
                        "a page failed at \(next): \(answer?.status ?? 0) \(answer?.text.prefix(200) ?? "no answer")")
            }
            seconds.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
            ids += data.compactMap { ($0["id"] as? String).flatMap { Int($0) } }
            path = (json["next_cursor"] as? String).map { "/api/cupcakes?cursor=\($0)" }
            if response.headers["connection"]?.lowercased() == "close" {
                socket = try TestSocket(port: port, timeout: 30)
            }
        }
        return (ids, seconds)
    }

    static func median(_ values: ArraySlice<Double>) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    @Test(arguments: Engine.allCases)
    func aCursorWalkOverAMillionOrdersSeesEachOnceWhileOrdersAreAdded(engine: Engine) throws {
        let directory = try TemporaryDirectory()
        let postgres = engine == .postgres ? try PostgresFixture.shared.get().newDatabase() : nil
        let path = postgres?.url ?? directory.path("orders.sqlite")
        let count = 1_000_000
        let make = { (number: Int) -> NewOrder in
            let order = Order(
                type: number % 4, quantity: 3 + number % 18, name: "Walker \(number % 997)",
                streetAddress: "\(number) Main St", city: "Nashville", zip: "37201")
            return NewOrder(order: order, costCents: order.costCents, createdAtMilliseconds: Int64(number))
        }
        let store = try OrderStores.open(path, options: OrderStores.Options(poolSize: 1))
        try store.bulkInsert(count: count, batchSize: 100_000, make: make, progress: { _ in })
        store.close()
        try postgres?.psql("ANALYZE orders")
        let server = try ServerProcess(
            databasePath: path, arguments: ["--quiet", "--api-key", "app", "--staff-key", "staff"])
        // Orders keep arriving during the walks (at most 5,000; stopped after them).
        let adding = OrderLoad(
            port: server.port, clients: 1, perClient: 5_000, prefix: "during", headers: ["x-api-key": "app"])
        defer { adding.stop() }

        // Oldest first: the orders added meanwhile come after the walk's position, so it sees
        // all of the million once, and some of the new ones at its end.
        let oldestFirst = try Self.walk(
            port: server.port, firstPath: "/api/cupcakes?sort=createdAt&per_page=100", key: "staff")
        let original = oldestFirst.ids.filter { $0 <= count }
        #expect(original.count == count)
        #expect(Set(original).count == count)
        #expect(oldestFirst.ids == oldestFirst.ids.sorted())
        // By name, newest placement first within a name: every original order once.
        let byName = try Self.walk(port: server.port, firstPath: "/api/cupcakes?sort=-name&per_page=100", key: "staff")
        let originalByName = byName.ids.filter { $0 <= count }
        #expect(originalByName.count == count && Set(originalByName).count == count)
        let added = adding.stop()
        #expect(added.count { $0.status == 201 } > 0)
        #expect(server.stop() == 0)

        let first = Self.median(oldestFirst.seconds.prefix(20))
        let last = Self.median(oldestFirst.seconds.suffix(20))
        let firstByName = Self.median(byName.seconds.prefix(20))
        let lastByName = Self.median(byName.seconds.suffix(20))
        print(
            "RELIABILITY cursor (\(engine)): walked 1,000,000 orders by time and by name in pages of 100 while "
                + "\(added.count { $0.status == 201 }) orders were added: each original order seen exactly once; "
                + String(
                    format: "median page time first 20 / last 20: %.2f / %.2f ms by time, %.2f / %.2f ms by name",
                    first * 1000, last * 1000, firstByName * 1000, lastByName * 1000))
    }
}
