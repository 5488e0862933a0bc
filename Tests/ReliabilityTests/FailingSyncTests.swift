import CupcakeTestSupport
import Foundation
import Testing

/// A disk whose fsync fails (EIO), injected into the real server with an `LD_PRELOAD` shim:
/// while a flag file exists, `fsync` and `fdatasync` fail. The server must acknowledge nothing
/// it could not make durable, stop writing at the first failed sync (the kernel reports a
/// write-back error only once, so a later fsync that succeeds proves nothing), keep the WAL
/// whole, and lose nothing acknowledged across a restart on a healthy disk.
@Suite struct FailingSyncTests {
    static let shimSource = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <stdlib.h>
        #include <unistd.h>
        static int failing(void) {
            const char *flag = getenv("CUPCAKE_TEST_FAIL_SYNC");
            return flag != 0 && access(flag, F_OK) == 0;
        }
        int fsync(int fd) {
            if (failing()) { errno = EIO; return -1; }
            return ((int (*)(int))dlsym(RTLD_NEXT, "fsync"))(fd);
        }
        int fdatasync(int fd) {
            if (failing()) { errno = EIO; return -1; }
            return ((int (*)(int))dlsym(RTLD_NEXT, "fdatasync"))(fd);
        }
        """

    /// Builds the shim with the C compiler; nil when there is none.
    static func buildShim(in directory: TemporaryDirectory) throws -> String? {
        let source = directory.path("failsync.c")
        let library = directory.path("failsync.so")
        try shimSource.write(toFile: source, atomically: true, encoding: .utf8)
        for compiler in ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"]
        where FileManager.default.isExecutableFile(atPath: compiler) {
            let built = try ProcessRunner.run(
                URL(fileURLWithPath: compiler), ["-shared", "-fPIC", "-o", library, source, "-ldl"])
            if built.status == 0 { return library }
        }
        return nil
    }

    struct Posted {
        var key: String
        var body: String
        var response: RawHTTP.Response
    }

    static func post(_ key: String, to server: ServerProcess) throws -> Posted {
        let body = HostileCorpus.valid.replacingOccurrences(of: "\"Taylor\"", with: "\"\(key)\"")
        return Posted(
            key: key, body: body,
            response: try RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": key]))
    }

    /// Restarts on a healthy disk (no shim), checks every acknowledged order and that each
    /// refused one, retried with its key, is stored once; returns how many orders there are.
    static func restartAndCheck(
        path: String, acknowledged: [Posted], refused: [Posted], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int {
        let server = try ServerProcess(databasePath: path, arguments: ["--quiet"])
        #expect(
            try RawHTTP.request(port: server.port, method: "GET", path: "/readyz").status == 200,
            sourceLocation: sourceLocation)
        for sent in acknowledged {
            let id = try #require(sent.response.json?["id"] as? String, sourceLocation: sourceLocation)
            let stored = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)")
            let name = (stored.json?["data"] as? [String: Any])?["name"] as? String
            #expect(name == sent.key, "acknowledged order \(id) lost", sourceLocation: sourceLocation)
        }
        for sent in refused {
            let retry = try RawHTTP.postOrder(
                port: server.port, json: sent.body, headers: ["Idempotency-Key": sent.key])
            #expect(retry.status == 201, sourceLocation: sourceLocation)
        }
        let list = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes").json
        #expect(server.stop() == 0, sourceLocation: sourceLocation)
        #expect(
            try DatabaseFileInspector(path: path).sqlite3("PRAGMA integrity_check").stdout == "ok\n",
            sourceLocation: sourceLocation)
        return list?["total"] as? Int ?? -1
    }

    /// One failing commit, then the disk healthy again at once: the writes must stop at the
    /// commit's own failure, before the checkpointer's next sync of the WAL (10 ms later) could
    /// see it. Ten: every commit while the disk fails is refused.
    @Test(arguments: [1, 10])
    func withFullDurabilityNoOrderWhoseFsyncFailedIsAcknowledged(failing: Int) throws {
        let directory = try TemporaryDirectory()
        let shim = try #require(try Self.buildShim(in: directory), "no C compiler to build the fsync shim")
        let flag = directory.path("fail-sync")
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(
            databasePath: path, arguments: ["--quiet", "--durability", "full"],
            environment: ["LD_PRELOAD": shim, "CUPCAKE_TEST_FAIL_SYNC": flag])
        let before = try (0..<10).map { try Self.post("full-before-\($0)", to: server) }
        FileManager.default.createFile(atPath: flag, contents: nil)
        let during = try (0..<failing).map { try Self.post("full-during-\($0)", to: server) }
        try FileManager.default.removeItem(atPath: flag)
        // The disk answers again, but the server stays stopped until it is restarted.
        let after = try (0..<5).map { try Self.post("full-after-\($0)", to: server) }
        #expect(before.allSatisfy { $0.response.status == 201 })
        #expect(during.allSatisfy { $0.response.status == 503 }, "\(during.map(\.response.status))")
        #expect(after.allSatisfy { $0.response.status == 503 }, "\(after.map(\.response.status))")
        #expect(server.log.contains("(SQLite 1034)"), "\(server.log)")  // SQLITE_IOERR_FSYNC
        #expect(server.log.contains("no order is stored until cupcake serve is restarted"), "\(server.log)")
        // Not ready while it refuses orders, so an orchestrator restarts it.
        let ready = try RawHTTP.request(port: server.port, method: "GET", path: "/readyz")
        #expect(ready.status == 503)
        #expect(ready.text.contains("failed (fsync)"), "\(ready.text)")
        server.kill9()

        let total = try Self.restartAndCheck(path: path, acknowledged: before, refused: during + after)
        #expect(total == 10 + failing + 5)
        print(
            "RELIABILITY fsync (full): fsync failing (EIO) for \(failing) order(s): all refused with 503, and the 5 "
                + "after it too (writes stop until a restart); the 10 before kept across kill -9; retries stored "
                + "the \(failing + 5) once each")
    }

    @Test func withProcessDurabilityAFailedSyncStopsWritesAndKeepsTheWAL() throws {
        let directory = try TemporaryDirectory()
        let shim = try #require(try Self.buildShim(in: directory), "no C compiler to build the fsync shim")
        let flag = directory.path("fail-sync")
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(
            databasePath: path, arguments: ["--quiet", "--durability", "process"],
            environment: ["LD_PRELOAD": shim, "CUPCAKE_TEST_FAIL_SYNC": flag])
        var acknowledged = try (0..<20).map { try Self.post("process-before-\($0)", to: server) }
        #expect(acknowledged.allSatisfy { $0.response.status == 201 })
        FileManager.default.createFile(atPath: flag, contents: nil)
        // Commits do not fsync in this mode: the checkpoint thread's next sync (within 10 ms)
        // fails, and from then on nothing is written. Bounded: 2,000 tries.
        var refused: [Posted] = []
        for number in 0..<2_000 where refused.isEmpty {
            let sent = try Self.post("process-during-\(number)", to: server)
            if sent.response.status == 201 { acknowledged.append(sent) } else { refused.append(sent) }
        }
        #expect(refused.first?.response.status == 503)
        try FileManager.default.removeItem(atPath: flag)
        refused += try (0..<5).map { try Self.post("process-after-\($0)", to: server) }
        #expect(refused.allSatisfy { $0.response.status == 503 })
        #expect(server.log.contains("no order is stored until cupcake serve is restarted"), "\(server.log)")
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/readyz").status == 503)
        // A clean stop must not checkpoint or delete the WAL: it holds what the database may not.
        #expect(server.stop() == 0)
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(wal > 0)

        let total = try Self.restartAndCheck(path: path, acknowledged: acknowledged, refused: refused)
        #expect(total == acknowledged.count + refused.count)
        print(
            "RELIABILITY fsync (process): after the first failed sync \(refused.count) orders refused with 503 (the "
                + "disk healthy again for 5 of them); \(acknowledged.count) acknowledged before, all kept across a "
                + "clean stop that left the WAL alone; retries stored the refused ones once each")
    }
}
