import CupcakeStorage
import CupcakeTestSupport
import Foundation
import Testing

/// Part 1: kill -9 under load, restart, and prove that nothing acknowledged was lost and that
/// replaying every request creates nothing twice.
@Suite struct CrashTests {
    /// What one client request did.
    struct Sent: Sendable {
        var key: String
        var body: String
        /// The id when the server answered 201 before the kill.
        var acknowledgedID: String?
    }

    final class Ledger: @unchecked Sendable {
        // Safe: `entries` is only touched while holding `lock`.
        let lock = NSLock()
        var entries: [Sent] = []
        func add(_ sent: Sent) { lock.withLock { entries.append(sent) } }
    }

    final class StopFlag: @unchecked Sendable {
        // Safe: `stopped` is only touched while holding `lock`.
        let lock = NSLock()
        var stopped = false
        var isStopped: Bool { lock.withLock { stopped } }
        func stop() { lock.withLock { stopped = true } }
    }

    @Test func killsUnderLoadLoseNoAcknowledgedOrderAndReplaysCreateNoDuplicate() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"))
        let kills = 5
        var everything: [Sent] = []
        var acknowledged = 0
        var replayed = 0
        for round in 0..<kills {
            let ledger = Ledger()
            let stop = StopFlag()
            let port = server.port
            let clients = Thread {
                _ = Parallel.run(16, timeout: 30) { client in
                    var number = 0
                    // Bounded: at most 400 orders per client per round, and it stops at the kill.
                    while !stop.isStopped && number < 400 {
                        number += 1
                        let key = "crash-\(round)-\(client)-\(number)"
                        let body = HostileCorpus.valid.replacingOccurrences(
                            of: "Taylor", with: "R\(round) C\(client) N\(number)")
                        let response = try? RawHTTP.postOrder(port: port, json: body, headers: ["Idempotency-Key": key])
                        let id = response?.status == 201 ? response?.json?["id"] as? String : nil
                        ledger.add(Sent(key: key, body: body, acknowledgedID: id))
                        if response == nil || response?.status == 0 { break }
                    }
                    return number
                }
            }
            clients.start()
            usleep(useconds_t(250_000 + 100_000 * round))
            server.kill9()
            stop.stop()
            // Let the clients notice the dead server (each request has a 10 s deadline at most).
            let deadline = Date().addingTimeInterval(30)
            while clients.isExecuting && Date() < deadline { usleep(20_000) }
            try server.start()

            let sent = ledger.lock.withLock { ledger.entries }
            // Every order answered 201 is there, exactly as it was acknowledged.
            for entry in sent {
                guard let id = entry.acknowledgedID else { continue }
                acknowledged += 1
                let asked = Date()
                let stored = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)")
                // When no answer came (status 0), say how long it waited, whether the request
                // reached the server at all, and what a second GET gets.
                #expect(
                    stored.status == 200,
                    """
                    acknowledged order \(id) lost after kill \(round + 1); no answer after \
                    \(Date().timeIntervalSince(asked)) s; GET logged: \(server.log.contains("GET /api/cupcakes/\(id) ")); \
                    again: \((try? RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)"))?.status ?? -1); \
                    log tail: \(server.log.suffix(600))
                    """
                )
                #expect(
                    (stored.json?["data"] as? [String: Any])?["name"] as? String
                        == entry.body.components(separatedBy: "\"name\":\"")[1].components(separatedBy: "\"")[0])
            }
            // Replaying every request, acknowledged or not, gives back the original ids.
            for entry in sent {
                let replay = try RawHTTP.postOrder(
                    port: server.port, json: entry.body, headers: ["Idempotency-Key": entry.key])
                #expect(replay.status == 201)
                if let id = entry.acknowledgedID {
                    #expect(replay.headers["idempotent-replayed"] == "true")
                    #expect(replay.json?["id"] as? String == id)
                    replayed += 1
                }
            }
            everything += sent
        }
        // One order per key ever sent: nothing lost, nothing doubled.
        let list = try #require(try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes").json)
        #expect(list["total"] as? Int == Set(everything.map(\.key)).count)
        #expect(server.stop() == 0)
        print(
            "RELIABILITY crash: \(kills) kill -9 under 16 concurrent clients, \(everything.count) orders sent, "
                + "\(acknowledged) acknowledged, 0 lost, \(replayed) replays returned their original id, "
                + "\(list["total"] as? Int ?? -1) orders for \(Set(everything.map(\.key)).count) keys (no duplicate)")
    }
}
