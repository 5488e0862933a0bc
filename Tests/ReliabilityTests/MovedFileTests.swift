import CupcakeTestSupport
import Foundation
import Testing

/// The database file or its WAL deleted or renamed under a running server (an operator's
/// mistake, a cleanup script): SQLite would go on committing into files nobody can reopen. The
/// server notices before it acknowledges, saves what it had, and refuses further orders (503).
@Suite struct MovedFileTests {
    /// Runs 4 clients until `change` has been made after 300 acknowledged orders and 20 orders
    /// have been refused since; returns the ledger.
    static func loadAround(_ server: ServerProcess, prefix: String, change: () -> Void) -> [OrderLoad.Sent] {
        let load = OrderLoad(port: server.port, clients: 4, perClient: 50_000, prefix: prefix)
        var deadline = Date().addingTimeInterval(60)
        while Date() < deadline, load.acknowledged < 300 { usleep(5_000) }
        change()
        deadline = Date().addingTimeInterval(30)
        while Date() < deadline, load.sent.count { $0.status == 503 } < 20 { usleep(5_000) }
        return load.stop()
    }

    @Test func aDeletedWALStopsAcknowledgingAndAKillLosesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        let sent = Self.loadAround(server, prefix: "walgone") { unlink(path + "-wal") }
        let acknowledged = sent.filter { $0.status == 201 }
        #expect(sent.count { $0.status == 503 } >= 20)
        #expect(sent.allSatisfy { [201, 503].contains($0.status) })
        let ready = try RawHTTP.request(port: server.port, method: "GET", path: "/readyz")
        #expect(ready.status == 503)
        #expect(ready.text.contains("deleted, renamed or replaced"), "\(ready.text)")
        server.kill9()

        try server.start()
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/readyz").status == 200)
        #expect(server.stop() == 0)
        let inspector = DatabaseFileInspector(path: path)
        #expect(try inspector.sqlite3("PRAGMA integrity_check").stdout == "ok\n")
        let names = Set(try inspector.sqlite3("SELECT name FROM orders").stdout.split(separator: "\n").map(String.init))
        let lost = acknowledged.filter { !names.contains($0.name) }
        #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.count) acknowledged orders lost")
        print(
            "RELIABILITY moved: WAL deleted under 4 clients: \(acknowledged.count) acknowledged, then "
                + "\(sent.count { $0.status == 503 }) refused with 503; after kill -9 and restart 0 lost")
    }

    /// A file moved while nothing is written: readiness notices before any order meets it.
    @Test func aMovedFileMakesTheServerNotReadyBeforeAnyWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/readyz").status == 200)
        #expect(rename(path, directory.path("elsewhere.sqlite")) == 0)
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/readyz").status == 503)
        #expect(try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid).status == 503)
        #expect(server.stop() == 0)
    }

    @Test func aRenamedDatabaseStopsAcknowledgingAndKeepsWhatItHad() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let moved = directory.path("renamed.sqlite")
        let server = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        let sent = Self.loadAround(server, prefix: "renamed") { rename(path, moved) }
        let acknowledged = sent.filter { $0.status == 201 }
        #expect(sent.count { $0.status == 503 } >= 20)
        let refused = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid)
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "5")
        #expect(server.log.contains("was deleted, renamed or replaced"))
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/readyz").status == 503)
        #expect(server.stop() == 0)

        // Everything acknowledged is in the renamed file; nothing is left to replay at the old
        // name, where a new server starts empty and sound.
        let inspector = DatabaseFileInspector(path: moved)
        #expect(try inspector.sqlite3("PRAGMA integrity_check").stdout == "ok\n")
        let names = Set(try inspector.sqlite3("SELECT name FROM orders").stdout.split(separator: "\n").map(String.init))
        #expect(acknowledged.allSatisfy { names.contains($0.name) })
        let fresh = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        #expect(try RawHTTP.request(port: fresh.port, method: "GET", path: "/api/cupcakes").json?["total"] as? Int == 0)
        #expect(try RawHTTP.request(port: fresh.port, method: "GET", path: "/readyz").status == 200)
        #expect(fresh.stop() == 0)
        #expect(try DatabaseFileInspector(path: path).sqlite3("PRAGMA integrity_check").stdout == "ok\n")
    }
}
