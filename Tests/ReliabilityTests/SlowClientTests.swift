import CupcakeTestSupport
import Foundation
import Testing

/// Part 4: clients that send headers and one byte, then stall, must not hold the server.
@Suite struct SlowClientTests {
    @Test func twoHundredStalledUploadsDoNotDelayANormalOrderAndAreDropped() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path("server.json")
        // The per-address connection limit is raised: this test is about stalled connections
        // (ConnectionLimitTests covers many of them from one address).
        try Data(#"{"idleTimeoutSeconds": 2, "connectionsPerClient": 1000}"#.utf8).write(
            to: URL(fileURLWithPath: config))
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--config", config, "--quiet"])
        var stalled: [TestSocket] = []
        for _ in 0..<200 {
            let socket = try TestSocket(port: server.port, timeout: 5)
            try socket.send(
                Data(
                    "POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 170\r\n\r\n{"
                        .utf8))
            stalled.append(socket)
        }
        let started = Date()
        let order = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid)
        let elapsed = Date().timeIntervalSince(started)
        #expect(order.status == 201)
        // A liveness bound with three orders of magnitude of slack, not a benchmark.
        #expect(elapsed < 1.0, "a normal order took \(elapsed) s beside 200 stalled uploads")

        // The stalled ones are dropped after the 2 s inactivity timeout (checked for up to 10 s).
        let deadline = Date().addingTimeInterval(10)
        var open = stalled.count
        while Date() < deadline {
            open = stalled.filter { !$0.isClosedByPeer() }.count
            if open == 0 { break }
            usleep(100_000)
        }
        #expect(open == 0, "\(open) stalled connections still open")
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/healthz").status == 200)
        #expect(server.stop() == 0)
        print(
            "RELIABILITY slow clients: 200 stalled uploads, normal order answered in \(String(format: "%.3f", elapsed)) s, all 200 dropped after the idle timeout"
        )
    }

    /// A client that is never idle, sending a byte every 300 ms: the idle timeout (1 s) never
    /// fires, so only the request deadline (2 s) drops it. A keep-alive client with pauses
    /// between complete requests keeps its connection.
    @Test func tricklingClientsAreDroppedAtTheRequestDeadline() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path("server.json")
        try Data(#"{"idleTimeoutSeconds": 1, "requestTimeoutSeconds": 2}"#.utf8).write(to: URL(fileURLWithPath: config))
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--config", config, "--quiet"])
        let headers = try TestSocket(port: server.port, timeout: 5)
        try headers.send(Data("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: ".utf8))
        let body = try TestSocket(port: server.port, timeout: 5)
        try body.send(
            Data("POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n".utf8))
        let patient = try TestSocket(port: server.port, timeout: 5)
        var headersClosedAfter: Int?
        var bodyClosedAfter: Int?
        // At most 40 bytes (12 s): far past the 2 s deadline and the watch's 0.5 s checks.
        for index in 0..<40 where headersClosedAfter == nil || bodyClosedAfter == nil {
            if headersClosedAfter == nil {
                if headers.isClosedByPeer() || (try? headers.send(Data("a".utf8))) == nil { headersClosedAfter = index }
            }
            if bodyClosedAfter == nil {
                if body.isClosedByPeer() || (try? body.send(Data("a".utf8))) == nil { bodyClosedAfter = index }
            }
            if index % 2 == 0 {
                try patient.send(Data("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
                #expect(patient.receiveResponse(deadline: Date().addingTimeInterval(5))?.status == 200)
            }
            usleep(300_000)
        }
        // Dropped after the deadline, not before it (2 s is about 7 bytes at 300 ms).
        let droppedAt = try #require(headersClosedAfter)
        #expect((5...30).contains(droppedAt), "a trickled header was dropped after \(droppedAt) bytes")
        let bodyDroppedAt = try #require(bodyClosedAfter)
        #expect((5...30).contains(bodyDroppedAt), "a trickled body was dropped after \(bodyDroppedAt) bytes")
        #expect(!patient.isClosedByPeer())
        #expect(server.stop() == 0)
        print(
            "RELIABILITY trickling clients: headers dropped after \(droppedAt) bytes, body after \(bodyDroppedAt) (one every 300 ms, deadline 2 s, idle timeout 1 s); a keep-alive client with pauses kept its connection"
        )
    }
}
