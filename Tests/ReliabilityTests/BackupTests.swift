import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake backup` against a server under load: the copy holds every order acknowledged before
/// the backup began, passes SQLite's integrity check, is private, and opens as a database.
@Suite struct BackupTests {
    @Test func aBackupUnderLoadHoldsEveryOrderAcknowledgedBeforeIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        let inspector = DatabaseFileInspector(path: path)
        let first = inspector.walRestarts ?? 0
        let load = OrderLoad(port: server.port, clients: 8, perClient: 50_000, prefix: "backup")
        // Past a WAL restart, so the copy needs both the database file and the WAL.
        inspector.waitForWALRestarts(first + 2)
        let acknowledgedBefore = load.sent.filter { $0.status == 201 }
        let backupFile = directory.path("copy.sqlite")
        let backup = try ProcessRunner.cupcake(
            ["backup", "--to", backupFile, "--endpoint", "\(server.baseURL)/api/cupcakes"], timeout: 120)
        let sent = load.stop()
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.hasPrefix("Backup of "))
        #expect(backup.stdout.contains("written to \(backupFile)"))

        let attributes = try FileManager.default.attributesOfItem(atPath: backupFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try inspector.sqlite3("PRAGMA integrity_check", file: backupFile).stdout == "ok\n")
        let names = Set(
            try inspector.sqlite3("SELECT name FROM orders", file: backupFile).stdout.split(separator: "\n").map(
                String.init))
        let missing = acknowledgedBefore.filter { !names.contains($0.name) }
        #expect(missing.isEmpty, "\(missing.count) orders acknowledged before the backup are not in it")
        // Nothing left behind: no half-written copy on either side.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains(".backup-") || $0.contains(".part-")
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
        #expect(server.stop() == 0)

        // The copy is a database cupcake serves as it is.
        let restored = try ServerProcess(databasePath: backupFile, arguments: ["--quiet"])
        let sample = try #require(acknowledgedBefore.last?.id)
        let order = try RawHTTP.request(port: restored.port, method: "GET", path: "/api/cupcakes/\(sample)")
        #expect(order.status == 200)
        let list = try RawHTTP.request(port: restored.port, method: "GET", path: "/api/cupcakes").json
        #expect((list?["total"] as? Int) == names.count)
        #expect(restored.stop() == 0)
        print(
            "RELIABILITY backup: taken under 8 clients after 2 WAL restarts; \(acknowledgedBefore.count) orders "
                + "acknowledged before it, all in the copy (\(names.count) orders, \(sent.count) sent in all); "
                + "integrity ok, mode 0600, served by cupcake serve --database")
    }

    @Test func aBackupNeedsTheStaffKeyAndNeverTakesAPathFromTheClient() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--quiet", "--api-key", "app1", "--staff-key", "k1"])
        for key in [nil, "app1"] {
            let refused = try ProcessRunner.cupcake(
                ["backup", "--to", directory.path("copy.sqlite"), "--endpoint", "\(server.baseURL)/api/cupcakes"]
                    + (key.map { ["--api-key", $0] } ?? []))
            #expect(refused.status == 77, "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.path("copy.sqlite")))
        }
        // A path in the request is ignored: the copy is streamed, never written where asked.
        let target = directory.path("elsewhere.sqlite")
        let answer = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/backup?to=\(target)", headers: ["x-api-key": "k1"])
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "application/vnd.sqlite3")
        #expect(answer.body.prefix(16) == Data("SQLite format 3\0".utf8))
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(
            try RawHTTP.request(port: server.port, method: "POST", path: "/api/backup", headers: ["x-api-key": "k1"])
                .status == 405)
        #expect(server.stop() == 0)
    }
}
