import CupcakeTestSupport
import Foundation
import Testing

/// kill -9 at production volume: after several WAL restarts, the moment another has just
/// happened, under 8 clients. Then a restart: every acknowledged order is there exactly once,
/// SQLite's integrity check passes, and no id is handed out twice.
@Suite struct HeavyCrashTests {
    @Test func aKillRightAfterAWALRestartLosesNothingAndReusesNoId() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        let inspector = DatabaseFileInspector(path: path)
        let first = inspector.walRestarts ?? 0
        let load = OrderLoad(port: server.port, clients: 8, perClient: 50_000, prefix: "heavy")
        // Five restarts take seconds (120 s is a failure); then the next one, and the kill at
        // once: the WAL has just been started over, the database just checkpointed into.
        let before = inspector.waitForWALRestarts(first + 5)
        inspector.waitForWALRestarts(before + 1, timeout: 60, poll: 0.0002)
        server.kill9()
        let restarts = (inspector.walRestarts ?? 0) - first
        let sent = load.stop()
        #expect(restarts >= 6, "only \(restarts) WAL restarts before the kill")
        let acknowledged = sent.filter { $0.status == 201 }

        try server.start()
        // Every order sent again with its key: the acknowledged ones are replays of their ids,
        // the rest are created now, once each.
        let replays = OrderLoad.replay(sent, port: server.port)
        #expect(replays.count == sent.count)
        #expect(replays.allSatisfy { $0.status == 201 })
        let lost = replays.filter { $0.sent.status == 201 && ($0.id != $0.sent.id || !$0.replayed) }
        #expect(lost.isEmpty, "\(lost.count) acknowledged orders were not replayed with their id")

        // Cancel the newest order; after another kill its id is still not handed out again.
        let ids = replays.compactMap { $0.id.flatMap { Int($0) } }
        let newest = try #require(ids.max())
        #expect(try RawHTTP.request(port: server.port, method: "DELETE", path: "/api/cupcakes/\(newest)").status == 204)
        server.kill9()
        try server.start()
        let next = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid)
        let nextID = try #require((next.json?["id"] as? String).flatMap { Int($0) })
        #expect(nextID > newest)
        #expect(server.stop() == 0)

        // What is on disk: one row per key ever sent (plus the last order; the cancelled one is
        // kept, cancelled), each acknowledged order with its id and name, and a sound file.
        #expect(try inspector.sqlite3("PRAGMA integrity_check").stdout == "ok\n")
        #expect(try inspector.sqlite3("SELECT status FROM orders WHERE id = \(newest)").stdout == "cancelled\n")
        let rows = try inspector.sqlite3("SELECT id, name FROM orders WHERE status <> 'cancelled'").stdout.split(
            separator: "\n"
        ).map {
            $0.split(separator: "|", maxSplits: 1).map(String.init)
        }
        let byName = Dictionary(rows.map { ($0[1], $0[0]) }, uniquingKeysWith: { first, _ in first })
        #expect(byName.count == rows.count, "an order is stored twice")
        #expect(rows.count == Set(sent.map(\.key)).count)
        for order in acknowledged where order.id != String(newest) {
            #expect(byName[order.name] == order.id, "acknowledged order \(order.id ?? "?") (\(order.name)) lost")
        }
        print(
            "RELIABILITY heavy crash: kill -9 right after WAL restart \(restarts) under 8 clients; \(sent.count) sent, "
                + "\(acknowledged.count) acknowledged, 0 lost, \(replays.count { $0.replayed }) replays with their id, "
                + "\(rows.count) orders for \(Set(sent.map(\.key)).count) keys; integrity ok; id \(newest) not reused")
    }
}
