import CupcakeTestSupport
import Foundation
import Testing

/// Event streams at volume and across instances: 500 streams held open at once from eight
/// loopback addresses, each told of a move; and on PostgreSQL a move made through one instance
/// reaching a stream on another. The times are printed, not asserted (a shared 2-core machine).
@Suite struct StreamScaleTests {
    static func body(_ name: String) -> String {
        HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: name)
    }

    static func move(port: Int, _ id: String, _ status: String) throws -> Int {
        try RawHTTP.request(
            port: port, method: "PATCH", path: "/api/cupcakes/\(id)", body: Data(#"{"status":"\#(status)"}"#.utf8)
        ).status
    }

    /// The server's resident memory, from /proc.
    static func residentMiB(_ pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    @Test func fiveHundredStreamsAreEachToldOfAMove() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"), arguments: ["--quiet"])
        let id = try #require(
            try RawHTTP.postOrder(port: server.port, json: Self.body("streamed")).json?["id"] as? String)
        // 63 from each of 127.0.0.2 to 127.0.0.9: under the 64 connections a client may hold.
        let streams = try (0..<500).map { index in
            try EventStreamClient(
                port: server.port, path: "/api/events/stream", from: "127.0.0.\(2 + index / 63)", timeout: 30)
        }
        #expect(streams.allSatisfy { $0.status == 200 })
        let rss = server.processID.map(Self.residentMiB) ?? 0
        let moved = Date()
        #expect(try Self.move(port: server.port, id, "baking") == 200)
        var delays: [Double] = []
        var missing = 0
        let deadline = Date().addingTimeInterval(30)
        for stream in streams {
            // A stream opened within a poll of the order's placement may be told of it first.
            var told = false
            while !told, let event = stream.nextEvent(deadline: deadline) {
                told = EventStreamClient.json(event)["status"] as? String == "baking"
            }
            if told { delays.append(Date().timeIntervalSince(moved)) } else { missing += 1 }
        }
        #expect(missing == 0, "\(missing) of 500 streams were not told")
        // The server is still answering beside them.
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/healthz").status == 200)
        #expect(server.stop() == 0, "a clean stop with 500 streams open")
        let sorted = delays.sorted()
        let last = sorted.last ?? 0
        print(
            "RELIABILITY streams: 500 open from 8 addresses, every one told of the move; the last read "
                + String(format: "%.0f ms", last * 1000) + " after the move's answer (read one after another); "
                + String(format: "server RSS %.1f MiB with 500 idle streams", rss))
    }

    @Test func aMoveThroughOneInstanceReachesAStreamOnAnother() throws {
        let database = try PostgresFixture.shared.get().newDatabase()
        let instances = try (0..<2).map { _ in try ServerProcess(databasePath: database.url, arguments: ["--quiet"]) }
        let id = try #require(
            try RawHTTP.postOrder(port: instances[0].port, json: Self.body("across")).json?["id"] as? String)
        let stream = try EventStreamClient(port: instances[1].port, path: "/api/cupcakes/\(id)/events")
        #expect(stream.status == 200)
        let deadline = Date().addingTimeInterval(20)
        let placed = try #require(stream.nextEvent(deadline: deadline))
        #expect(EventStreamClient.json(placed)["status"] as? String == "placed")
        var delays: [Double] = []
        for status in ["baking", "out_for_delivery", "delivered"] {
            let moved = Date()
            #expect(try Self.move(port: instances[0].port, id, status) == 200)
            let event = try #require(stream.nextEvent(deadline: deadline), "\(status) never reached instance B")
            #expect(EventStreamClient.json(event)["status"] as? String == status)
            delays.append(Date().timeIntervalSince(moved))
        }
        for instance in instances { #expect(instance.stop() == 0) }
        print(
            "RELIABILITY streams across instances: 3 moves through instance A reached a stream on instance B in "
                + delays.map { String(format: "%.0f ms", $0 * 1000) }.joined(separator: ", "))
    }
}
