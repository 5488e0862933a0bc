import CupcakeTestSupport
import Foundation
import Synchronization
import Testing

/// kill -9 while 8 staff clients move orders along: after the restart, every move answered 200
/// is there, and so is its entry in the order's history (the event written in the move's
/// transaction), at the version the answer named.
@Suite struct StatusCrashTests {
    /// One move the server answered 200: the order, the status it reached, its new version.
    struct Move: Sendable {
        var id: String
        var status: String
        var version: Int
    }

    @Test func aKillDuringMovesLosesNoAnsweredMoveNorItsEvent() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"), arguments: ["--quiet"])
        let ids = try (0..<400).map { index -> String in
            let body = HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: "moved-\(index)")
            return try #require(try RawHTTP.postOrder(port: server.port, json: body).json?["id"] as? String)
        }
        let answered = Mutex([Move]())
        let stop = Atomic(false)
        let port = server.port
        let clients = DispatchGroup()
        clients.enter()
        Thread.detachNewThread {
            defer { clients.leave() }
            _ = Parallel.run(8, timeout: 120) { client in
                var random = SplitMix64(seed: UInt64(client) + 11)
                // Each client moves its own slice one step at a time, so every move it asks for
                // is allowed; the kill lands between, during or after them.
                let mine = stride(from: client, to: ids.count, by: 8).map { ids[$0] }
                var next = Dictionary(uniqueKeysWithValues: mine.map { ($0, 0) })
                let path = ["baking", "out_for_delivery", "delivered"]
                while !stop.load(ordering: .relaxed) {
                    let open = mine.filter { next[$0, default: 3] < 3 }
                    guard !open.isEmpty else { break }
                    let id = open[Int(random.next() % UInt64(open.count))]
                    let status = path[next[id, default: 0]]
                    let answer = try? RawHTTP.request(
                        port: port, method: "PATCH", path: "/api/cupcakes/\(id)",
                        body: Data(#"{"status":"\#(status)"}"#.utf8), timeout: 5)
                    guard let answer, answer.status == 200 else { continue }
                    next[id, default: 0] += 1
                    let version = (answer.json?["data"] as? [String: Any])?["version"] as? Int ?? 0
                    answered.withLock { $0.append(Move(id: id, status: status, version: version)) }
                }
                return 0
            }
        }
        // The kill, once a good share of the moves have been answered.
        let deadline = Date().addingTimeInterval(60)
        while answered.withLock({ $0.count }) < 800 && Date() < deadline { usleep(2_000) }
        server.kill9()
        stop.store(true, ordering: .relaxed)
        #expect(clients.wait(timeout: .now() + 150) == .success)
        let moves = answered.withLock { $0 }
        #expect(moves.count >= 800, "only \(moves.count) moves answered before the kill")

        try server.start()
        var missing: [String] = []
        for id in Set(moves.map(\.id)) {
            let order = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)")
            let data = order.json?["data"] as? [String: Any] ?? [:]
            let history = (data["history"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
            let version = data["version"] as? Int ?? 0
            for move in moves where move.id == id {
                // Version v is the (v)th entry: placed is version 1, each move one more.
                if version < move.version || history.count < move.version
                    || history[move.version - 1] != move.status
                {
                    missing.append("order \(id) \(move.status) v\(move.version): now v\(version) \(history)")
                }
            }
        }
        #expect(missing.isEmpty, "answered moves lost: \(missing.prefix(5))")
        #expect(server.stop() == 0)
        print(
            "RELIABILITY status crash: kill -9 under 8 staff clients after \(moves.count) answered moves "
                + "of \(Set(moves.map(\.id)).count) orders; after the restart every one is there with its history entry"
        )
    }
}
