import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Synchronization
import Testing

/// 16 HTTP clients moving 2,000 orders at random, half the moves with `If-Match` on the version
/// they read: no update is lost (each order's version is one more than the moves answered 200),
/// every history is a path the rules allow, versions only grow, and the list's totals per
/// status agree with the orders. On each engine.
@Suite struct StatusRaceTests {
    @Test(arguments: Engine.allCases)
    func sixteenClientsMovingTwoThousandOrdersLoseNoUpdate(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let port = server.port
        let count = 2_000
        let created = Parallel.run(16, timeout: 240) { client -> [String] in
            stride(from: client, to: count, by: 16).compactMap { index in
                let body = HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: "race-\(index)")
                return (try? RawHTTP.postOrder(port: port, json: body).json?["id"] as? String) ?? nil
            }
        }.compactMap { $0 }.flatMap { $0 }
        #expect(created.count == count)
        let ids = created
        let made = Mutex([String: Int]())
        let answers = Mutex([Int: Int]())
        let statuses = OrderStatus.allCases.map(\.wireName)
        _ = Parallel.run(16, timeout: 240) { client -> Int in
            var random = SplitMix64(seed: UInt64(client) + 101)
            for _ in 0..<150 {
                // Half the moves on 40 hot orders, so that clients meet on them often.
                let id = ids[Int(random.next() % (random.next() % 2 == 0 ? 40 : UInt64(ids.count)))]
                let target = statuses[Int(random.next() % UInt64(statuses.count))]
                var headers: [String: String] = [:]
                if random.next() % 2 == 0 {
                    guard let seen = try? RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes/\(id)"),
                        let tag = seen.headers["etag"]
                    else { continue }
                    headers["If-Match"] = tag
                }
                let body =
                    target == "cancelled" ? #"{"status":"cancelled","reason":"race"}"# : #"{"status":"\#(target)"}"#
                let status =
                    (try? RawHTTP.request(
                        port: port, method: "PATCH", path: "/api/cupcakes/\(id)", headers: headers,
                        body: Data(body.utf8), from: "127.0.0.\(2 + client % 8)"
                    ).status) ?? 0
                answers.withLock { $0[status, default: 0] += 1 }
                if status == 200 { made.withLock { $0[id, default: 0] += 1 } }
            }
            return 0
        }
        let tally = answers.withLock { $0 }
        #expect(Set(tally.keys).isSubset(of: [200, 409, 412]), "\(tally)")
        let moves = made.withLock { $0 }
        var byStatus: [String: Int] = [:]
        var broken: [String] = []
        for id in ids {
            let answer = try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes/\(id)")
            let data = answer.json?["data"] as? [String: Any] ?? [:]
            let history = (data["history"] as? [[String: Any]] ?? []).map {
                (OrderStatus(wireName: $0["status"] as? String ?? "") ?? .placed, $0["by"] as? String ?? "")
            }
            let version = data["version"] as? Int ?? 0
            if version != 1 + (moves[id] ?? 0) || history.count != version { broken.append("\(id): v\(version)") }
            for (from, to) in zip(history, history.dropFirst())
            where StatusMove(to: to.0, by: .staff, reason: "race").refusal(from: from.0) != nil {
                broken.append("\(id): \(from.0) → \(to.0)")
            }
            byStatus[data["status"] as? String ?? "", default: 0] += 1
        }
        #expect(broken.isEmpty, "\(broken.prefix(5))")
        for status in statuses {
            let list = try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes?status=\(status)")
            #expect(list.json?["total"] as? Int == byStatus[status] ?? 0, "\(status)")
        }
        print(
            "RELIABILITY status race (\(engine)): 16 clients, 2,400 moves on \(count) orders: "
                + "\(tally[200] ?? 0) × 200, \(tally[409] ?? 0) × 409, \(tally[412] ?? 0) × 412; every version = 1 + "
                + "its 200s, every history a path the rules allow, totals per status exact")
    }
}
