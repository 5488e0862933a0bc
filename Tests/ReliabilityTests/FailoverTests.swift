import CupcakeTestSupport
import Foundation
import Testing

/// High availability on PostgreSQL: a synchronous standby, instances that follow the
/// primary through libpq's multi-host URI, and the commit whose answer never arrives. Every
/// order acknowledged with 201 must exist exactly once on whichever server is the primary.
@Suite(.serialized) struct FailoverTests {
    static let standbyName = "cupcake_standby"

    /// A primary and its synchronous standby, and the URL the instances use: libpq's multi-host
    /// form, so each connection goes to whichever server takes writes.
    static func synchronousPair() throws -> (primary: PostgresCluster, standby: PostgresCluster, url: String) {
        let primary = try PostgresCluster()
        let standby = try PostgresCluster(standbyOf: primary, name: standbyName)
        try primary.waitForStandby(standbyName)
        try primary.requireSynchronousStandby(standbyName)
        let url =
            "postgres://postgres@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/postgres"
            + "?target_session_attrs=read-write"
        return (primary, standby, url)
    }

    /// The connection breaks with the batch's COMMIT on its way: before it reached PostgreSQL
    /// (nothing stored), or after PostgreSQL committed it and before its answer came back (stored,
    /// and the server cannot know). Either way the answer is 503, never 201, and a retry with the
    /// key makes exactly one order: stored now, or the stored one replayed.
    @Test(arguments: [ConnectionCutter.Mode.beforeSending, .afterTheAnswerStarts])
    func aCommitWhoseOutcomeIsUnknownIsNever201AndIsStoredOnce(_ mode: ConnectionCutter.Mode) throws {
        let cluster = try PostgresCluster()
        let cutter = try ConnectionCutter(backendPort: cluster.port)
        let server = try ServerProcess(
            databasePath: "postgres://postgres@127.0.0.1:\(cutter.port)/postgres", arguments: ["--quiet"])
        // A warm-up order, so the cut lands on the batch statement of an established connection.
        let warm = try RawHTTP.postOrder(port: server.port, json: ScaleOutTests.body(name: "Warm Up"))
        #expect(warm.status == 201)
        let name = "Outcome Unknown \(mode == .beforeSending ? "Before" : "After")"
        let body = ScaleOutTests.body(name: name)
        // The batch's INSERT sends the names as a text array, {"…"}; the claim before it sends
        // the body as JSON ("name":"…"), so this marks the INSERT alone.
        cutter.arm(marker: "{\"\(name)\"}", mode: mode)
        let first = try RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": "unknown-1"])
        #expect(cutter.cutCount == 1, "the connection was cut")
        #expect(first.status == 503, "\(first.status) \(first.text)")
        #expect(first.headers["retry-after"] != nil)
        let storedAfterCut = try cluster.psql("SELECT count(*) FROM orders WHERE name = '\(name)'").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(storedAfterCut == (mode == .beforeSending ? "0" : "1"), "what PostgreSQL holds after the cut")
        let retried = Self.retryUntil201(port: server.port, body: body, key: "unknown-1")
        #expect(retried?.status == 201, "the retry is answered 201")
        // Committed before: the retry finds that order. Not committed: the retry stores it.
        #expect((retried?.headers["idempotent-replayed"] == "true") == (mode == .afterTheAnswerStarts))
        let stored = try cluster.psql("SELECT id FROM orders WHERE name = '\(name)'").stdout
            .split(separator: "\n").map(String.init)
        #expect(stored == [retried?.json?["id"] as? String ?? "?"], "stored exactly once, with the id answered")
        print(
            "RELIABILITY commit outcome unknown (\(mode == .beforeSending ? "cut before the COMMIT" : "answer lost after the COMMIT")): "
                + "first answer \(first.status), PostgreSQL held \(storedAfterCut), the retry \(retried?.status ?? 0)"
                + "\(retried?.headers["idempotent-replayed"] == "true" ? " (replayed)" : ""), stored \(stored.count)")
        #expect(server.stop() == 0)
    }

    /// The standby stops: the primary waits for it (PostgreSQL's statement timeout does not
    /// cover the wait), so nothing is answered. Cancelling the wait (an operator's
    /// pg_cancel_backend) makes PostgreSQL keep the commit locally and warn that it "might not
    /// have been replicated": such an order is on one machine only, so it is answered 503, not
    /// 201. Without a key the waiting statement is the order's INSERT (kept, answered 503); with
    /// one it is the key's claim, and the retry once the standby is back stores the order once.
    @Test func anOrderOnlyThePrimaryHoldsIsNotAcknowledged() throws {
        let (primary, standby, url) = try Self.synchronousPair()
        let server = try ServerProcess(databasePath: url, arguments: ["--quiet"])
        #expect(try RawHTTP.postOrder(port: server.port, json: ScaleOutTests.body(name: "Both Machines")).status == 201)
        standby.stop()
        // Readiness says why nothing can be committed now.
        var ready: RawHTTP.Response?
        #expect(
            ScaleOutTests.wait(seconds: 10) {
                ready = try? RawHTTP.request(port: server.port, method: "GET", path: "/readyz")
                return ready?.status == 503
            })
        #expect(ready?.text.contains("synchronous standby is not connected") == true, "\(ready?.text ?? "")")
        func stored(_ name: String) throws -> String {
            try primary.psql("SELECT count(*) FROM orders WHERE name = '\(name)'").stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        /// Posts on a thread of its own, cancels the statement waiting for the standby, returns
        /// the answer.
        func postAndCancelTheWait(_ body: String, headers: [String: String]) -> RawHTTP.Response? {
            let done = DispatchSemaphore(value: 0)
            let box = AnswerBox()
            Thread {
                box.set(
                    try? RawHTTP.request(
                        port: server.port, method: "POST", path: "/api/cupcakes", headers: headers,
                        body: Data(body.utf8), timeout: 45))
                done.signal()
            }.start()
            let waiting = ScaleOutTests.wait(seconds: 20) {
                (try? primary.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").stdout
                    .trimmingCharacters(in: .whitespacesAndNewlines)) == "1"
            }
            #expect(waiting, "the commit waits for the standby")
            #expect(box.get() == nil, "nothing answered while the standby is away")
            _ = try? primary.psql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
            #expect(done.wait(timeout: .now() + 50) == .success)
            return box.get()
        }
        let unkeyed = postAndCancelTheWait(ScaleOutTests.body(name: "Primary Only"), headers: [:])
        #expect(unkeyed?.status == 503, "\(unkeyed?.status ?? 0) \(unkeyed?.text ?? "")")
        #expect(try stored("Primary Only") == "1", "PostgreSQL kept it locally")
        #expect(server.log.contains("synchronous replication"), "\(server.log)")
        let keyedBody = ScaleOutTests.body(name: "Keyed While Alone")
        let keyed = postAndCancelTheWait(keyedBody, headers: ["Idempotency-Key": "alone-1"])
        #expect(keyed?.status == 503, "\(keyed?.status ?? 0) \(keyed?.text ?? "")")
        // The standby comes back and catches up; the retry with the key makes exactly one order.
        try standby.start()
        let retried = Self.retryUntil201(port: server.port, body: keyedBody, key: "alone-1")
        #expect(retried?.status == 201)
        #expect(try stored("Keyed While Alone") == "1")
        print(
            "RELIABILITY synchronous standby stopped: commits waited for it (no answer); with the wait "
                + "cancelled, an order PostgreSQL kept on the primary alone was answered \(unkeyed?.status ?? 0), "
                + "a keyed one \(keyed?.status ?? 0), and its retry after the standby was back \(retried?.status ?? 0), "
                + "stored once")
        #expect(server.stop() == 0)
    }

    /// Posts `body` with `key` until the answer is 201 (at most 30 s); the last answer.
    static func retryUntil201(port: Int, body: String, key: String) -> RawHTTP.Response? {
        var answer: RawHTTP.Response?
        _ = ScaleOutTests.wait(seconds: 30) {
            answer = try? RawHTTP.postOrder(port: port, json: body, headers: ["Idempotency-Key": key])
            return answer?.status == 201
        }
        return answer
    }

    /// One answer handed from a thread to the test.
    final class AnswerBox: @unchecked Sendable {
        // Safe: `answer` is only touched while holding `lock`.
        private let lock = NSLock()
        private var answer: RawHTTP.Response?
        func set(_ value: RawHTTP.Response?) { lock.withLock { answer = value } }
        func get() -> RawHTTP.Response? { lock.withLock { answer } }
    }

    @Test func killingThePrimaryUnderLoadLosesNoAcknowledgedOrder() throws {
        let (primary, standby, url) = try Self.synchronousPair()
        let instances = try (0..<2).map { _ in try ServerProcess(databasePath: url, arguments: ["--quiet"]) }
        let nginx = try NginxProcess(upstreamPorts: instances.map(\.port))
        #expect(try RawHTTP.request(port: instances[0].port, method: "GET", path: "/readyz").status == 200)
        let started = Date()
        let load = OrderLoad(port: nginx.port, clients: 16, perClient: 1_000_000, prefix: "F", retries: true)
        #expect(ScaleOutTests.wait(seconds: 60) { load.acknowledged >= 300 }, "the load got going")
        primary.killPostmaster()
        let killed = Date()
        // No primary: POSTs 503, /healthz up, /readyz 503 naming the database.
        var ready: RawHTTP.Response?
        #expect(
            ScaleOutTests.wait(seconds: 10) {
                ready = try? RawHTTP.request(port: instances[1].port, method: "GET", path: "/readyz")
                return ready?.status == 503
            }, "/readyz says not ready")
        #expect(ready?.text.contains("database") == true, "\(ready?.text ?? "")")
        #expect(try RawHTTP.request(port: instances[1].port, method: "GET", path: "/healthz").status == 200)
        try standby.promote()
        // The outage as a client sees it: from the kill to the first 201 after the promotion.
        var firstOK: Date?
        var probe = 0
        _ = ScaleOutTests.wait(seconds: 30) {
            probe += 1
            let answer = try? RawHTTP.postOrder(
                port: nginx.port, json: ScaleOutTests.body(name: "Probe \(probe)"),
                headers: ["Idempotency-Key": "probe-\(probe)"])
            if answer?.status == 201 { firstOK = Date() }
            return firstOK != nil
        }
        let outage = firstOK.map { $0.timeIntervalSince(killed) } ?? -1
        #expect(outage > 0 && outage < 5, "outage \(outage) s")
        #expect(try RawHTTP.request(port: instances[0].port, method: "GET", path: "/readyz").status == 200)
        // The load runs on for 10 s in all, then every client finishes its order.
        usleep(UInt32(max(0, 10 - Date().timeIntervalSince(started)) * 1_000_000))
        let ledger = load.stop()
        let statuses = Dictionary(grouping: ledger, by: \.status).mapValues(\.count)
        #expect(Set(statuses.keys) == [201], "each order, retried with its key, ends in 201: \(statuses)")
        let stored = ScaleOutTests.rows(
            try standby.psql("SELECT name || E'\\t' || id FROM orders WHERE name LIKE 'F %'").stdout)
        ScaleOutTests.expectExactlyOnce(ledger, stored: stored)
        let lost = ledger.filter { $0.status == 201 && stored[$0.name] == nil }.count
        let duplicated = stored.values.filter { $0.count > 1 }.count
        // The old primary, fenced, comes back read-only: it cannot take a write by accident.
        try primary.fence()
        try primary.start()
        #expect(try primary.isInRecovery(), "the old primary came back as a standby")
        #expect(throws: (any Error).self) { try primary.psql("CREATE TABLE split_brain (x int)") }
        print(
            "RELIABILITY failover (kill -9 of the primary, pg_ctl promote, 16 clients for 10 s through nginx): "
                + "\(ledger.count) orders, \(statuses[201] ?? 0) acknowledged, \(lost) lost, \(duplicated) duplicated, "
                + "\(ledger.map(\.attempts).reduce(0, +) - ledger.count) client retries; outage from the kill to the "
                + "first 201 after the promotion: \(String(format: "%.2f", outage)) s")
        for instance in instances { #expect(instance.stop() == 0) }
        nginx.stop()
    }
}
