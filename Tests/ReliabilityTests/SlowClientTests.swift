import CupcakeTestSupport
import Foundation
import Testing

/// Part 4: clients that send headers and one byte, then stall, must not hold the server.
@Suite struct SlowClientTests {
    @Test func twoHundredStalledUploadsDoNotDelayANormalOrderAndAreDropped() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path("server.json")
        try Data(#"{"idleTimeoutSeconds": 2}"#.utf8).write(to: URL(fileURLWithPath: config))
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--config", config, "--quiet"])
        var stalled: [TestSocket] = []
        for _ in 0..<200 {
            let socket = try TestSocket(port: server.port, timeout: 5)
            try socket.send(
                Data(
                    "POST /api/cupcakes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 170\r\n\r\n{"
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
}
