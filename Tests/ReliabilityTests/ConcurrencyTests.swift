import CupcakeTestSupport
import Foundation
import Testing

/// Part 2: many clients at once on one key or one order.
@Suite struct ConcurrencyTests {
    @Test(arguments: Engine.allCases, [20, 100])
    func parallelPostsWithOneKeyMakeOneOrder(engine: Engine, clients: Int) throws {
        let server = try TestServer(engine: engine)
        let port = server.port
        // From four loopback addresses, so that 100 clients stay under the per-address
        // connection limit (64) as 100 real clients would.
        let answers = Parallel.run(clients) { index in
            try? RawHTTP.postOrder(
                port: port, json: HostileCorpus.valid, headers: ["Idempotency-Key": "one-key"],
                from: "127.0.0.\(1 + index % 4)")
        }.compactMap { $0 ?? nil }
        #expect(answers.count == clients)
        #expect(answers.allSatisfy { $0.status == 201 || $0.status == 409 })
        let ids = Set(answers.filter { $0.status == 201 }.compactMap { $0.json?["id"] as? String })
        #expect(ids.count == 1)
        #expect(try server.orderCount() == 1)
        let final = try RawHTTP.postOrder(
            port: port, json: HostileCorpus.valid, headers: ["Idempotency-Key": "one-key"])
        #expect(final.headers["idempotent-replayed"] == "true")
        #expect(ids.contains(final.json?["id"] as? String ?? ""))
        print(
            "RELIABILITY concurrency: \(clients) parallel posts, one key: \(answers.filter { $0.status == 201 }.count)×201 \(answers.filter { $0.status == 409 }.count)×409, orders 1"
        )
    }

    @Test(arguments: Engine.allCases)
    func parallelPatchAndDeleteLeaveAConsistentState(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let port = server.port
        let created = try RawHTTP.postOrder(port: port, json: HostileCorpus.valid)
        let other = try RawHTTP.postOrder(port: port, json: HostileCorpus.valid)
        let id = try #require(created.json?["id"] as? String)
        let answers = Parallel.run(60) { index -> Int in
            let response: RawHTTP.Response?
            if index % 12 == 5 {
                response = try? RawHTTP.request(port: port, method: "DELETE", path: "/api/cupcakes/\(id)")
            } else {
                response = try? RawHTTP.request(
                    port: port, method: "PATCH", path: "/api/cupcakes/\(id)",
                    body: Data(#"{"isFavorite": \#(index % 2 == 0)}"#.utf8))
            }
            return response?.status ?? 0
        }.map { $0 ?? 0 }
        #expect(answers.allSatisfy { [200, 204].contains($0) }, "\(answers)")
        // Every cancel is answered as done; exactly one made the move, and the order is kept.
        #expect(answers.filter { $0 == 204 }.count == 5)
        let kept = try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes/\(id)")
        let order = try #require(kept.json?["data"] as? [String: Any])
        #expect(order["status"] as? String == "cancelled")
        let history = try #require(order["history"] as? [[String: Any]])
        #expect(history.compactMap { $0["status"] as? String } == ["placed", "cancelled"])
        #expect((order["version"] as? Int ?? 0) >= 2)
        // The counts the totals come from agree with the rows that are left.
        let all = try #require(try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes").json)
        #expect(all["total"] as? Int == 1)
        #expect(
            (all["data"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [
                other.json?["id"] as? String ?? ""
            ])
        let favorites = try #require(
            try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes?favorite=true").json)
        #expect(favorites["total"] as? Int == 0)
        let rest = try #require(
            try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes?favorite=false").json)
        #expect(rest["total"] as? Int == 1)
    }
}
