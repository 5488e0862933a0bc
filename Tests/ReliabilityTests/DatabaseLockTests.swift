import CupcakeTestSupport
import Foundation
import Testing

/// The database lock: a running `cupcake serve` holds its file alone for its whole life, past
/// many WAL restarts, and no other process (a second server, the `sqlite3` shell, Python's
/// sqlite3 module) can read it, write it, or delete or truncate its WAL.
@Suite struct DatabaseLockTests {
    /// Checks, from outside, that the server `pid` alone holds the database at `path`.
    static func expectHeldAlone(
        path: String, by pid: Int32, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let inspector = DatabaseFileInspector(path: path)
        #expect(inspector.lockHolders == [pid], "the server no longer holds its lock", sourceLocation: sourceLocation)
        // No descriptor of the database or its WAL would outlive an exec (the server never forks).
        let descriptors =
            DatabaseFileInspector.descriptors(of: pid, on: path)
            + DatabaseFileInspector.descriptors(of: pid, on: path + "-wal")
        #expect(descriptors.count >= 2, sourceLocation: sourceLocation)
        #expect(descriptors.allSatisfy { $0.closeOnExec }, "\(descriptors)", sourceLocation: sourceLocation)
        let wal = DatabaseFileInspector.identity(path + "-wal")
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0

        // A second server is refused (it would otherwise run until the timeout kills it).
        let second = try ProcessRunner.cupcake(
            ["serve", "--port", "0", "--quiet", "--no-pin-threads", "--database", path], timeout: 20)
        #expect(second.status == 74, "a second server started: \(second.stderr)", sourceLocation: sourceLocation)
        #expect(second.stderr.contains("in use by another process"), sourceLocation: sourceLocation)

        // The sqlite3 shell can neither read nor write.
        for sql in ["SELECT count(*) FROM orders", "DELETE FROM orders"] {
            let shell = try inspector.sqlite3(sql)
            #expect(shell.status != 0, "sqlite3 ran '\(sql)': \(shell.stdout)", sourceLocation: sourceLocation)
            #expect(shell.stderr.contains("database is locked"), "\(shell.stderr)", sourceLocation: sourceLocation)
        }

        // Python's sqlite3, read-only, then closing: the close is where a reader that got in
        // would checkpoint and delete the WAL.
        let python = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                """
                import sqlite3, sys
                try:
                    c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True, timeout=0.5)
                    print(c.execute('SELECT count(*) FROM orders').fetchall())
                    c.close()
                except sqlite3.Error as e:
                    print('refused:', e)
                """, path,
            ], timeout: 30)
        #expect(
            python.stdout.hasPrefix("refused: database is locked"), "\(python.stdout)", sourceLocation: sourceLocation)

        // The WAL is the same file, still linked, not shortened.
        #expect(DatabaseFileInspector.identity(path + "-wal") == wal, sourceLocation: sourceLocation)
        #expect(!DatabaseFileInspector.process(pid, holdsDeleted: path + "-wal"), sourceLocation: sourceLocation)
        let walSizeAfter = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSizeAfter >= walSize, "the WAL was truncated", sourceLocation: sourceLocation)
        #expect(inspector.lockHolders == [pid], sourceLocation: sourceLocation)
    }

    @Test func theServerHoldsItsDatabaseAloneThroughFiveWALRestarts() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        let pid = try #require(server.processID)
        let inspector = DatabaseFileInspector(path: path)
        try Self.expectHeldAlone(path: path, by: pid)

        let first = inspector.walRestarts ?? 0
        let load = OrderLoad(port: server.port, clients: 8, perClient: 50_000, prefix: "lock")
        var seen = first
        var checks = 0
        // Bounded: 5 restarts take a few seconds; 180 s is a failure.
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline, seen < first + 5 {
            usleep(20_000)
            let now = inspector.walRestarts ?? 0
            if now != seen {
                seen = now
                // Under load, right after a WAL restart (the moment the lock used to go).
                try Self.expectHeldAlone(path: path, by: pid)
                checks += 1
            }
        }
        let sent = load.stop()
        #expect(seen >= first + 5, "only \(seen - first) WAL restarts in 180 s")
        try Self.expectHeldAlone(path: path, by: pid)

        // Every acknowledged order is there once, read after a clean stop.
        #expect(server.stop() == 0)
        let acknowledged = sent.filter { $0.status == 201 }
        let names = try inspector.sqlite3("SELECT name FROM orders").stdout.split(separator: "\n").map(String.init)
        #expect(Set(names).count == names.count)
        #expect(Set(acknowledged.map(\.name)).isSubset(of: Set(names)))
        #expect(try inspector.sqlite3("PRAGMA integrity_check").stdout == "ok\n")
        print(
            "RELIABILITY lock: \(seen - first) WAL restarts under 8 clients, \(acknowledged.count) orders acknowledged; "
                + "after each restart the lock was held and a second server, sqlite3 and Python were refused "
                + "(\(checks + 2) checks); all \(acknowledged.count) acknowledged orders stored once")
    }
}
