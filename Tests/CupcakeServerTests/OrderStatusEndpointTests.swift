import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

/// An order's status through the API: PATCH and DELETE moves, the model's rules, `ETag` and
/// `If-Match`, the problems a refused move gets, and the list's status filter.
@Suite struct OrderStatusEndpointTests {
    static let staff = ["x-api-key": "staff-key"]

    static func server(_ engine: Engine) throws -> TestServer {
        try TestServer(engine: engine) { configuration in
            configuration.apiKey = "app-key"
            configuration.staffKey = "staff-key"
        }
    }

    /// Places an order with the app key; its id and receipt token.
    static func place(_ server: TestServer, name: String = "Ann") throws -> (id: String, token: String) {
        let json = #"{"type":1,"quantity":3,"name":"\#(name)","streetAddress":"s","city":"c","zip":"z"}"#
        let response = try RawHTTP.postOrder(port: server.port, json: json, headers: ["x-api-key": "app-key"])
        return (try #require(response.json?["id"] as? String), try #require(response.json?["receiptToken"] as? String))
    }

    static func patch(
        _ server: TestServer, _ id: String, _ body: String, headers: [String: String] = staff
    ) throws -> RawHTTP.Response {
        try RawHTTP.request(
            port: server.port, method: "PATCH", path: "/api/cupcakes/\(id)", headers: headers, body: Data(body.utf8))
    }

    static func data(_ response: RawHTTP.Response) -> [String: Any] {
        response.json?["data"] as? [String: Any] ?? [:]
    }

    @Test(arguments: Engine.allCases)
    func theStaffMoveAnOrderAlongAndItsHistoryAndETagFollow(engine: Engine) throws {
        let server = try Self.server(engine)
        let (id, _) = try Self.place(server)
        let first = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/cupcakes/\(id)", headers: Self.staff)
        #expect(first.headers["etag"] == #""v1""#)
        #expect(Self.data(first)["status"] as? String == "placed")
        #expect((Self.data(first)["history"] as? [[String: Any]])?.map { $0["by"] as? String } == ["customer"])
        var tag = #""v1""#
        for status in ["baking", "out_for_delivery", "delivered"] {
            var headers = Self.staff
            headers["If-Match"] = tag
            let moved = try Self.patch(server, id, #"{"status":"\#(status)"}"#, headers: headers)
            #expect(moved.status == 200)
            #expect(Self.data(moved)["status"] as? String == status)
            let next = try #require(moved.headers["etag"])
            #expect(next != tag)
            tag = next
        }
        let done = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/cupcakes/\(id)", headers: Self.staff)
        let history = try #require(Self.data(done)["history"] as? [[String: Any]])
        #expect(history.map { $0["status"] as? String } == ["placed", "baking", "out_for_delivery", "delivered"])
        #expect(history.dropFirst().allSatisfy { $0["by"] as? String == "staff" })
        #expect(Self.data(done)["version"] as? Int == 4)
        var unchanged = Self.staff
        unchanged["If-None-Match"] = tag
        #expect(
            try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)", headers: unchanged)
                .status
                == 304)
    }

    @Test(arguments: Engine.allCases)
    func aStaleIfMatchIs412AndChangesNothing(engine: Engine) throws {
        let server = try Self.server(engine)
        let (id, _) = try Self.place(server)
        #expect(try Self.patch(server, id, #"{"status":"baking"}"#).status == 200)
        for stale in [#""v1""#, #"W/"v2""#, #""x""#, #""v1", "v3""#] {
            var headers = Self.staff
            headers["If-Match"] = stale
            let refused = try Self.patch(server, id, #"{"status":"out_for_delivery"}"#, headers: headers)
            #expect(refused.status == 412, "If-Match: \(stale)")
            #expect(refused.headers["content-type"] == "application/problem+json")
            #expect(refused.headers["etag"] == #""v2""#)
            let cancel = try RawHTTP.request(
                port: server.port, method: "DELETE", path: "/api/cupcakes/\(id)", headers: headers)
            #expect(cancel.status == 412)
        }
        let order = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/cupcakes/\(id)", headers: Self.staff)
        #expect(Self.data(order)["status"] as? String == "baking")
        #expect(Self.data(order)["version"] as? Int == 2)
        var current = Self.staff
        current["If-Match"] = #""v1", "v2""#
        #expect(try Self.patch(server, id, #"{"status":"out_for_delivery"}"#, headers: current).status == 200)
    }

    @Test(arguments: Engine.allCases)
    func aMoveTheModelRefusesIs409WithTheAllowedMoves(engine: Engine) throws {
        let server = try Self.server(engine)
        let (id, token) = try Self.place(server)
        let skip = try Self.patch(server, id, #"{"status":"delivered"}"#)
        #expect(skip.status == 409)
        #expect(skip.json?["code"] as? String == "status_move_not_allowed")
        #expect(skip.json?["currentStatus"] as? String == "placed")
        #expect(skip.json?["allowed"] as? [String] == ["baking", "cancelled"])
        // The customer, with the order's token: may cancel while placed, and nothing else.
        let customer = ["x-api-key": "app-key", "Order-Token": token]
        let bake = try Self.patch(server, id, #"{"status":"baking"}"#, headers: customer)
        #expect(bake.status == 409)
        #expect(bake.json?["allowed"] as? [String] == ["cancelled"])
        #expect(try Self.patch(server, id, #"{"status":"baking"}"#).status == 200)
        let late = try RawHTTP.request(
            port: server.port, method: "DELETE", path: "/api/cupcakes/\(id)", headers: customer)
        #expect(late.status == 409)
        #expect(late.json?["allowed"] as? [String] == [])
        let noReason = try Self.patch(server, id, #"{"status":"cancelled"}"#)
        #expect(noReason.json?["code"] as? String == "reason_required")
        let badReason = try Self.patch(server, id, #"{"status":"cancelled","reason":"a\u202eb"}"#)
        #expect(badReason.status == 422)
        let cancelled = try Self.patch(server, id, #"{"status":"cancelled","reason":"oven broke"}"#)
        #expect(cancelled.status == 200)
        let history = try #require(Self.data(cancelled)["history"] as? [[String: Any]])
        #expect(history.last?["reason"] as? String == "oven broke")
    }

    @Test(arguments: Engine.allCases)
    func theCustomerCancelsTheirOwnPlacedOrder(engine: Engine) throws {
        let server = try Self.server(engine)
        let (id, token) = try Self.place(server)
        let (other, _) = try Self.place(server, name: "Bob")
        let customer = ["x-api-key": "app-key", "Order-Token": token]
        // Another order's token reaches nothing.
        #expect(
            try RawHTTP.request(port: server.port, method: "DELETE", path: "/api/cupcakes/\(other)", headers: customer)
                .status == 404)
        let cancelled = try RawHTTP.request(
            port: server.port, method: "DELETE", path: "/api/cupcakes/\(id)", headers: customer)
        #expect(cancelled.status == 204)
        let seen = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)", headers: customer)
        #expect(Self.data(seen)["status"] as? String == "cancelled")
        #expect((Self.data(seen)["history"] as? [[String: Any]])?.last?["by"] as? String == "customer")
    }

    @Test(arguments: Engine.allCases, ["", "placed,cancelled", "baking", "delivered,baking"])
    func theListFiltersByStatusWithExactTotals(engine: Engine, filter: String) throws {
        let server = try Self.server(engine)
        var ids: [String] = []
        for index in 0..<8 { ids.append(try Self.place(server, name: "N\(index)").id) }
        // 0, 1 baking; 2 delivered; 3 cancelled; the rest placed.
        for id in ids[0...2] { #expect(try Self.patch(server, id, #"{"status":"baking"}"#).status == 200) }
        _ = try Self.patch(server, ids[2], #"{"status":"out_for_delivery"}"#)
        _ = try Self.patch(server, ids[2], #"{"status":"delivered"}"#)
        _ = try Self.patch(server, ids[3], #"{"status":"cancelled"}"#)
        let status = ["baking", "baking", "delivered", "cancelled", "placed", "placed", "placed", "placed"]
        let wanted =
            filter.isEmpty
            ? Set(["placed", "baking", "out_for_delivery", "delivered"])
            : Set(filter.split(separator: ",").map(String.init))
        let expected = zip(ids, status).filter { wanted.contains($0.1) }.map(\.0).reversed()
        let query = filter.isEmpty ? "?per_page=3" : "?per_page=3&status=\(filter)"
        var seen: [String] = []
        var page = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/cupcakes\(query)", headers: Self.staff)
        for _ in 0..<5 {
            let json = try #require(page.json)
            #expect(json["total"] as? Int == expected.count)
            seen += (json["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            guard let cursor = json["next_cursor"] as? String else { break }
            page = try RawHTTP.request(
                port: server.port, method: "GET", path: "/api/cupcakes?cursor=\(cursor)", headers: Self.staff)
        }
        #expect(seen == Array(expected))
    }

    @Test(arguments: ["bogus", "placed,", "Placed"])
    func anUnknownStatusFilterIs400(filter: String) throws {
        let server = try Self.server(.sqlite)
        let response = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/cupcakes?status=\(filter)", headers: Self.staff)
        #expect(response.status == 400)
        #expect((response.json?["detail"] as? String)?.contains("out_for_delivery") == true)
    }

    /// Every (from, to, who) through the API, each on an order brought to `from` by the staff:
    /// allowed exactly where the rules say (cancelling always with a reason here).
    @Test(arguments: Engine.allCases)
    func everyMoveIsAnsweredAsTheRulesSay(engine: Engine) throws {
        let server = try Self.server(engine)
        let allowed: Set<String> = [
            "placed>baking>staff", "baking>out_for_delivery>staff", "out_for_delivery>delivered>staff",
            "placed>cancelled>customer", "placed>cancelled>staff", "baking>cancelled>staff",
            "out_for_delivery>cancelled>staff",
        ]
        let paths: [String: [String]] = [
            "placed": [], "baking": ["baking"], "out_for_delivery": ["baking", "out_for_delivery"],
            "delivered": ["baking", "out_for_delivery", "delivered"], "cancelled": ["cancelled"],
        ]
        for (from, path) in paths.sorted(by: { $0.key < $1.key }) {
            for to in OrderStatus.allCases.map(\.wireName) {
                for who in ["customer", "staff"] {
                    let (id, token) = try Self.place(server)
                    for step in path { _ = try Self.patch(server, id, #"{"status":"\#(step)","reason":"r"}"#) }
                    let headers = who == "staff" ? Self.staff : ["x-api-key": "app-key", "Order-Token": token]
                    let answer = try Self.patch(server, id, #"{"status":"\#(to)","reason":"r"}"#, headers: headers)
                    let expected = allowed.contains("\(from)>\(to)>\(who)") ? 200 : 409
                    #expect(answer.status == expected, "\(from) → \(to) by \(who)")
                }
            }
        }
    }

    /// Two staff move the same orders at once, without If-Match: for each order one wins and the
    /// other is told 409, never both 200.
    @Test(arguments: Engine.allCases)
    func ofTwoStaffMovingOneOrderAtOnceOneWins(engine: Engine) throws {
        let server = try Self.server(engine)
        let ids = try (0..<30).map { _ in try Self.place(server).id }
        let answers = Parallel.run(2, timeout: 120) { client -> [Int] in
            ids.map { id in
                (try? RawHTTP.request(
                    port: server.port, method: "PATCH", path: "/api/cupcakes/\(id)", headers: Self.staff,
                    body: Data(#"{"status":"baking"}"#.utf8), from: "127.0.0.\(client + 2)"
                ).status) ?? 0
            }
        }.compactMap { $0 }
        #expect(answers.count == 2)
        for (index, id) in ids.enumerated() {
            let pair = answers.map { $0[index] }.sorted()
            #expect(pair == [200, 409], "order \(id): \(pair)")
        }
    }
}

extension OrderStatusEndpointTests {
    /// /metrics counts orders by status (from the database) and how long orders stayed in the
    /// status they left; promtool accepts it.
    @Test(arguments: Engine.allCases)
    func metricsCountOrdersByStatusAndTheTimeInEach(engine: Engine) throws {
        let server = try Self.server(engine)
        let ids = try (0..<3).map { _ in try Self.place(server).id }
        #expect(try Self.patch(server, ids[0], #"{"status":"baking"}"#).status == 200)
        #expect(try Self.patch(server, ids[1], #"{"status":"baking"}"#).status == 200)
        #expect(try Self.patch(server, ids[1], #"{"status":"out_for_delivery"}"#).status == 200)
        #expect(
            try RawHTTP.request(
                port: server.port, method: "DELETE", path: "/api/cupcakes/\(ids[2])", headers: Self.staff
            ).status == 204)
        let response = try RawHTTP.request(port: server.port, method: "GET", path: "/metrics", headers: Self.staff)
        let text = String(decoding: response.body, as: UTF8.self)
        let check = try MetricsTests.promtool(text)
        #expect(check.status == 0, "promtool: \(check.stdout) \(check.stderr)")
        let samples = MetricsTests.samples(text)
        #expect(samples[#"cupcake_orders{status="placed"}"#] == 0)
        #expect(samples[#"cupcake_orders{status="baking"}"#] == 1)
        #expect(samples[#"cupcake_orders{status="out_for_delivery"}"#] == 1)
        #expect(samples[#"cupcake_orders{status="cancelled"}"#] == 1)
        #expect(samples[#"cupcake_order_status_seconds_count{status="placed"}"#] == 3)
        #expect(samples[#"cupcake_order_status_seconds_count{status="baking"}"#] == 1)
    }
}
