import CupcakeTestSupport
import Foundation
import Testing

/// Several `cupcake serve` processes over one PostgreSQL database: one Idempotency-Key sent to
/// two instances at once, an instance killed behind nginx under load, PostgreSQL crashed and
/// restarted under load. Every order acknowledged with 201 must be stored exactly once.
@Suite(.serialized) struct ScaleOutTests {
    static func body(name: String) -> String {
        HostileCorpus.valid.replacingOccurrences(of: "\"Taylor\"", with: "\"\(name)\"")
    }

    /// Every order in the database: name → ids.
    static func storedIDs(_ database: PostgresDatabase) throws -> [String: [String]] {
        try rows(database.psql("SELECT name || E'\\t' || id FROM orders").stdout)
    }

    static func rows(_ text: String) -> [String: [String]] {
        var ids: [String: [String]] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count == 2 { ids[String(fields[0]), default: []].append(String(fields[1])) }
        }
        return ids
    }

    /// Checks the ledger against the database: every 201 stored once with its id, no name twice.
    static func expectExactlyOnce(_ ledger: [OrderLoad.Sent], stored: [String: [String]]) {
        var lost = 0
        var wrong = 0
        for sent in ledger where sent.status == 201 {
            guard let ids = stored[sent.name] else {
                lost += 1
                continue
            }
            if ids != [sent.id ?? ""] { wrong += 1 }
        }
        let duplicated = stored.filter { $0.value.count > 1 }
        #expect(lost == 0, "acknowledged orders missing from the database")
        #expect(wrong == 0, "acknowledged orders stored under another id, or twice")
        #expect(duplicated.isEmpty, "orders stored twice: \(duplicated.prefix(5))")
    }

    /// Waits (at most `seconds`) until `condition` holds.
    static func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    @Test func oneKeySentToTwoInstancesAtOnceMakesOneOrder() throws {
        let database = try PostgresFixture.shared.get().newDatabase()
        let instances = try (0..<2).map { _ in try ServerProcess(databasePath: database.url, arguments: ["--quiet"]) }
        let ports = instances.map(\.port)
        for round in 0..<50 {
            let key = "both-\(round)"
            let body = Self.body(name: "Round \(round)")
            // Both connections open first, then both requests released together.
            let sockets = try ports.map { try TestSocket(port: $0) }
            let request = Data(
                ("POST /api/cupcakes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Idempotency-Key: \(key)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                    + body).utf8)
            let answers = Parallel.run(2, timeout: 30) { index -> RawHTTP.Response? in
                guard (try? sockets[index].send(request)) != nil else { return nil }
                return sockets[index].receiveResponse(deadline: Date().addingTimeInterval(10))
            }
            let statuses = answers.map { $0??.status ?? 0 }
            // One makes the order; the other replays it or, still in flight, is told 409.
            #expect(statuses.contains(201), "round \(round): \(statuses)")
            #expect(statuses.allSatisfy { $0 == 201 || $0 == 409 }, "round \(round): \(statuses)")
            let ids = Set(answers.compactMap { $0??.json?["id"] as? String })
            #expect(ids.count == 1, "round \(round): \(ids)")
            // Asked again, each instance answers with that order.
            for port in ports {
                let again = try RawHTTP.postOrder(port: port, json: body, headers: ["Idempotency-Key": key])
                #expect(again.status == 201 && again.headers["idempotent-replayed"] == "true", "round \(round)")
                #expect((again.json?["id"] as? String).map { ids.contains($0) } == true)
            }
        }
        let stored = try Self.storedIDs(database)
        #expect(stored.count == 50)
        #expect(stored.values.allSatisfy { $0.count == 1 })
        print(
            "RELIABILITY one key, two instances: 50 rounds, \(stored.count) orders, \(stored.values.filter { $0.count > 1 }.count) duplicated"
        )
        for instance in instances { #expect(instance.stop() == 0) }
    }

    @Test func killingOneOfThreeInstancesBehindNginxLosesAndDuplicatesNothing() throws {
        let database = try PostgresFixture.shared.get().newDatabase()
        let instances = try (0..<3).map { _ in try ServerProcess(databasePath: database.url, arguments: ["--quiet"]) }
        let nginx = try NginxProcess(upstreamPorts: instances.map(\.port))
        // 16 clients, each order with its own key, retrying (same key) when an answer fails.
        let load = OrderLoad(port: nginx.port, clients: 16, perClient: 150, prefix: "N", retries: true)
        #expect(Self.wait(seconds: 60) { load.acknowledged >= 600 }, "the load got going")
        instances[1].kill9()
        let finished = load.wait(timeout: 180)
        let ledger = load.stop()
        #expect(finished, "the clients finished their orders")
        #expect(ledger.count == 16 * 150)
        // nginx tried each failed request on a live instance; a client's own retries cover the rest.
        let failed = ledger.filter { $0.status != 201 }
        #expect(failed.isEmpty, "orders never acknowledged: \(failed.prefix(5).map { "\($0.name): \($0.status)" })")
        let stored = try Self.storedIDs(database)
        Self.expectExactlyOnce(ledger, stored: stored)
        print(
            "RELIABILITY kill -9 behind nginx: \(ledger.count) orders from 16 clients, "
                + "\(ledger.filter { $0.status == 201 }.count) acknowledged, \(ledger.map(\.attempts).reduce(0, +) - ledger.count) "
                + "client retries, \(stored.count) stored, \(stored.values.filter { $0.count > 1 }.count) duplicated")
        // The survivors still serve, and both see every order.
        for survivor in [instances[0], instances[2]] {
            let listed = try RawHTTP.request(port: survivor.port, method: "GET", path: "/api/cupcakes?per_page=1")
            #expect(listed.json?["total"] as? Int == ledger.count)
            #expect(survivor.stop() == 0)
        }
    }

    @Test func postgresCrashedUnderLoadAnswers503ThenRecoversWithoutLosingAnOrder() throws {
        let cluster = try PostgresCluster()
        let server = try ServerProcess(databasePath: cluster.url, arguments: ["--quiet"])
        let load = OrderLoad(port: server.port, clients: 8, perClient: 1_000_000, prefix: "P")
        #expect(Self.wait(seconds: 60) { load.acknowledged >= 300 }, "the load got going")
        // A crash: no checkpoint, no goodbye to the clients; recovery replays the WAL at start.
        cluster.stop(immediately: true)
        let down = Date()
        #expect(
            Self.wait(seconds: 30) {
                load.sent.contains { $0.sentAt > down.addingTimeInterval(0.5) && $0.status == 503 }
            },
            "503s while the database is down")
        usleep(1_000_000)
        try cluster.start()
        let up = Date()
        let backAgain = Self.wait(seconds: 30) { load.sent.contains { $0.sentAt > up && $0.status == 201 } }
        let recovery = (load.sent.first { $0.sentAt > up && $0.status == 201 }?.sentAt.timeIntervalSince(up)) ?? -1
        usleep(500_000)
        let ledger = load.stop()
        #expect(backAgain, "orders are stored again once the database is back")
        #expect(recovery >= 0 && recovery <= 5, "first order stored \(recovery) s after the database was back")
        // Nothing but 201 and 503 (with a Retry-After, checked below); no 500, no dropped answer.
        let statuses = Dictionary(grouping: ledger, by: \.status).mapValues(\.count)
        #expect(Set(statuses.keys).isSubset(of: [201, 503]), "\(statuses)")
        let rows = try cluster.psql("SELECT name || E'\\t' || id FROM orders")
        let stored = Self.rows(rows.stdout)
        Self.expectExactlyOnce(ledger, stored: stored)
        print(
            "RELIABILITY PostgreSQL crashed under load: \(statuses[201] ?? 0) acknowledged, \(statuses[503] ?? 0) answered 503, "
                + "first order stored \(String(format: "%.2f", recovery)) s after the database was back, "
                + "\(stored.count) stored, \(stored.values.filter { $0.count > 1 }.count) duplicated")
        #expect(server.stop() == 0)
    }

    @Test func aStorage503CarriesRetryAfterAndARetryWithTheKeyStoresTheOrderOnce() throws {
        let cluster = try PostgresCluster()
        let server = try ServerProcess(databasePath: cluster.url, arguments: ["--quiet"])
        let body = Self.body(name: "Retry Later")
        cluster.stop()
        let refused = try RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": "later-1"])
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] != nil)
        #expect(refused.headers["content-type"] == "application/problem+json")
        // Reads fail the same way, and health says the process is up, readiness that it cannot
        // take orders, naming the database.
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes").status == 503)
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/healthz").status == 200)
        let ready = try RawHTTP.request(port: server.port, method: "GET", path: "/readyz")
        #expect(ready.status == 503 && ready.text.contains("the database cannot be reached"), "\(ready.text)")
        try cluster.start()
        var retried: RawHTTP.Response?
        #expect(
            Self.wait(seconds: 10) {
                retried = try? RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": "later-1"])
                return retried?.status == 201
            })
        #expect(retried?.headers["idempotent-replayed"] == nil)
        let again = try RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": "later-1"])
        #expect(again.headers["idempotent-replayed"] == "true")
        #expect(
            try cluster.psql("SELECT count(*) FROM orders").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == "1")
        #expect(server.stop() == 0)
    }
}

/// The cluster as `scripts/cluster` ships it (nginx with `max_fails=1 fail_timeout=2s`, two
/// instances over PostgreSQL) under a request whose head is over the server's limit but within
/// nginx's: every instance must answer it (431), never close without an answer, or nginx marks
/// the instances down and answers everyone 502.
@Suite(.serialized) struct ClusterAttackTests {
    @Test func anOversizedHeadRepeatedFor30SecondsFailsNoNormalRequest() throws {
        let database = try PostgresFixture.shared.get().newDatabase()
        let instances = try (0..<2).map { _ in try ServerProcess(databasePath: database.url, arguments: ["--quiet"]) }
        let nginx = try NginxProcess(upstreamPorts: instances.map(\.port))
        let attack = Data(
            ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: a=" + String(repeating: "c", count: 7_800) + "\r\n"
                + "X-Pad: " + String(repeating: "p", count: 8_050) + "\r\nConnection: close\r\n\r\n").utf8)
        let end = Date().addingTimeInterval(30)
        let results = Parallel.run(2, timeout: 60) { role -> [Int] in
            var statuses: [Int] = []
            var number = 0
            while Date() < end {
                number += 1
                if role == 0 {
                    // The attacker: every 1.8 s.
                    statuses.append((try? RawHTTP.exchange(port: nginx.port, bytes: attack).status) ?? 0)
                    usleep(1_800_000)
                } else {
                    // A steady client: a health check and an order, every 50 ms.
                    let health = try? RawHTTP.request(port: nginx.port, method: "GET", path: "/healthz")
                    statuses.append(health?.status ?? 0)
                    let order = try? RawHTTP.postOrder(
                        port: nginx.port, json: ScaleOutTests.body(name: "steady \(number)"),
                        headers: ["Idempotency-Key": "steady-\(number)"])
                    statuses.append(order?.status ?? 0)
                    usleep(50_000)
                }
            }
            return statuses
        }
        let attacks = results[0] ?? []
        let normal = results[1] ?? []
        #expect(attacks.count >= 10)
        // Refused: by the instances (431), or by nginx's own limit on heads (400).
        #expect(attacks.allSatisfy { $0 == 431 || $0 == 400 }, "the oversized request: \(Set(attacks))")
        let failed = normal.filter { $0 != 200 && $0 != 201 }
        #expect(normal.count > 100)
        #expect(failed.isEmpty, "\(failed.count) of \(normal.count) normal requests failed: \(Set(failed))")
        for instance in instances { #expect(instance.stop() == 0) }
        print(
            "RELIABILITY cluster: a 15.9 KB head (Cookie 7,800 + X-Pad 8,050) every 1.8 s for 30 s through nginx "
                + "(max_fails=1) to two instances: \(attacks.count) refused (\(Set(attacks).sorted())), \(failed.count) of \(normal.count) "
                + "normal requests failed")
    }
}
