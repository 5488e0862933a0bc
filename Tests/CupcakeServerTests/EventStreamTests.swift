import CupcakeTestSupport
import Foundation
import Testing

/// Live updates as Server-Sent Events: one order's stream for its customer or the staff, every
/// order's for the staff; resuming with Last-Event-ID; heartbeats; who may listen.
@Suite struct EventStreamTests {
    static let staff = OrderStatusEndpointTests.staff

    static func server(_ engine: Engine, heartbeat: Double = 10) throws -> TestServer {
        try TestServer(engine: engine) { configuration in
            configuration.apiKey = "app-key"
            configuration.staffKey = "staff-key"
            configuration.eventHeartbeatSeconds = heartbeat
        }
    }

    static func move(_ server: TestServer, _ id: String, _ status: String) throws {
        let answer = try OrderStatusEndpointTests.patch(server, id, #"{"status":"\#(status)"}"#)
        #expect(answer.status == 200, "\(id) → \(status): \(answer.text)")
    }

    @Test(arguments: Engine.allCases)
    func anOrdersStreamTellsItsWholeLifeAndEndsWhenItIsDelivered(engine: Engine) throws {
        let server = try Self.server(engine)
        let (id, token) = try OrderStatusEndpointTests.place(server)
        let stream = try EventStreamClient(
            port: server.port, path: "/api/cupcakes/\(id)/events",
            headers: ["x-api-key": "app-key", "Order-Token": token])
        #expect(stream.status == 200)
        #expect(stream.headers["content-type"]?.hasPrefix("text/event-stream") == true)
        let deadline = Date().addingTimeInterval(20)
        let placed = try #require(stream.nextEvent(deadline: deadline))
        #expect(EventStreamClient.json(placed)["status"] as? String == "placed")
        for status in ["baking", "out_for_delivery", "delivered"] {
            try Self.move(server, id, status)
            let event = try #require(stream.nextEvent(deadline: deadline), "no event for \(status)")
            let data = EventStreamClient.json(event)
            #expect(data["status"] as? String == status)
            #expect(data["orderId"] as? String == id)
            #expect(data["by"] as? String == "staff")
        }
        // The order is delivered: the stream ends.
        #expect(stream.nextEvent(deadline: deadline) == nil)
        #expect(stream.isClosed)
    }

    @Test func whoMayListen() throws {
        let server = try Self.server(.sqlite)
        let (id, _) = try OrderStatusEndpointTests.place(server)
        let noToken = try EventStreamClient(
            port: server.port, path: "/api/cupcakes/\(id)/events", headers: ["x-api-key": "app-key"])
        #expect(noToken.status == 404)
        let appOnAll = try EventStreamClient(
            port: server.port, path: "/api/events/stream", headers: ["x-api-key": "app-key"])
        #expect(appOnAll.status == 403)
        let badID = try EventStreamClient(
            port: server.port, path: "/api/events/stream", headers: ["x-api-key": "staff-key", "Last-Event-ID": "x"])
        #expect(badID.status == 400)
        let head = try RawHTTP.request(
            port: server.port, method: "HEAD", path: "/api/events/stream", headers: Self.staff)
        #expect(head.status == 405)
    }

    /// A staff stream cut after some events and resumed with the last id it saw misses none of
    /// the events made meanwhile and repeats none.
    @Test(arguments: Engine.allCases)
    func aResumedStreamMissesNoEventAndRepeatsNone(engine: Engine) throws {
        let server = try Self.server(engine)
        let ids = try (0..<6).map { _ in try OrderStatusEndpointTests.place(server).id }
        var stream = try EventStreamClient(port: server.port, path: "/api/events/stream", headers: Self.staff)
        #expect(stream.status == 200)
        let deadline = Date().addingTimeInterval(30)
        var seen: [String] = []
        var lastID: String?
        // Before the cut: each order baking.
        for id in ids { try Self.move(server, id, "baking") }
        while seen.count < ids.count, let event = stream.nextEvent(deadline: deadline) {
            let data = EventStreamClient.json(event)
            if data["status"] as? String == "baking" {
                seen.append("\(data["orderId"] ?? "")/baking")
                lastID = event.id
            }
        }
        #expect(seen.count == ids.count)
        // The cut: the stream is dropped.
        stream = try EventStreamClient(port: server.port, path: "/api/cupcakes/\(ids[0])", headers: Self.staff)
        // Meanwhile: each order out for delivery, and half of them delivered.
        for id in ids { try Self.move(server, id, "out_for_delivery") }
        for id in ids.prefix(3) { try Self.move(server, id, "delivered") }
        var headers = Self.staff
        headers["Last-Event-ID"] = try #require(lastID)
        let resumed = try EventStreamClient(port: server.port, path: "/api/events/stream", headers: headers)
        #expect(resumed.status == 200)
        var after: [String] = []
        while after.count < ids.count + 3, let event = resumed.nextEvent(deadline: deadline) {
            let data = EventStreamClient.json(event)
            after.append("\(data["orderId"] ?? "")/\(data["status"] ?? "")")
        }
        let expected = ids.map { "\($0)/out_for_delivery" } + ids.prefix(3).map { "\($0)/delivered" }
        #expect(after == expected)
        // Nothing more: no repeat arrives after them.
        #expect(resumed.nextEvent(deadline: Date().addingTimeInterval(1)) == nil)
    }

    @Test func anIdleStreamGetsHeartbeats() throws {
        let server = try Self.server(.sqlite, heartbeat: 1)
        let stream = try EventStreamClient(port: server.port, path: "/api/events/stream", headers: Self.staff)
        let deadline = Date().addingTimeInterval(20)
        var comments = 0
        while comments < 2, let message = stream.next(deadline: deadline) {
            if message.isComment { comments += 1 }
        }
        #expect(comments == 2)
        #expect(!stream.isClosed)
    }
}
