import CupcakeTestSupport
import Foundation
import Testing

/// A disk whose fsync fails (EIO), injected into the real server with an `LD_PRELOAD` shim: while
/// a flag file exists, `fsync` and `fdatasync` fail. With `--durability full` every commit
/// waits for its fsync, so none of those orders may be acknowledged, and the ones that were
/// acknowledged before or after must survive a kill -9.
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

    /// Builds the shim with the C compiler; nil (and the test is skipped) when there is none.
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

    @Test func ordersWhoseFsyncFailsAreRefusedAndTheRestSurviveAKill() throws {
        let directory = try TemporaryDirectory()
        let shim = try #require(try Self.buildShim(in: directory), "no C compiler to build the fsync shim")
        let flag = directory.path("fail-sync")
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(
            databasePath: path, arguments: ["--quiet", "--durability", "full"],
            environment: ["LD_PRELOAD": shim, "CUPCAKE_TEST_FAIL_SYNC": flag])
        func post(_ name: String) throws -> (key: String, body: String, response: RawHTTP.Response) {
            let body = HostileCorpus.valid.replacingOccurrences(of: "\"Taylor\"", with: "\"\(name)\"")
            return (
                name, body, try RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": name])
            )
        }
        let before = try (0..<10).map { try post("sync-before-\($0)") }
        FileManager.default.createFile(atPath: flag, contents: nil)
        let during = try (0..<10).map { try post("sync-during-\($0)") }
        try FileManager.default.removeItem(atPath: flag)
        let after = try (0..<10).map { try post("sync-after-\($0)") }
        #expect(before.allSatisfy { $0.response.status == 201 })
        #expect(during.allSatisfy { $0.response.status == 503 }, "\(during.map(\.response.status))")
        #expect(after.allSatisfy { $0.response.status == 201 }, "\(after.map(\.response.status))")
        #expect(server.log.contains("disk I/O error (SQLite 1034)"), "\(server.log)")  // SQLITE_IOERR_FSYNC
        server.kill9()

        try server.start()
        for sent in before + after {
            let id = try #require(sent.response.json?["id"] as? String)
            let stored = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)")
            #expect(stored.json?["data"].flatMap { ($0 as? [String: Any])?["name"] as? String } == sent.key)
        }
        // The refused ones, retried with their keys, are each stored once.
        for sent in during {
            let retry = try RawHTTP.postOrder(
                port: server.port, json: sent.body, headers: ["Idempotency-Key": sent.key])
            #expect(retry.status == 201)
        }
        let total = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes").json?["total"] as? Int
        #expect(total == 30)
        #expect(server.stop() == 0)
        #expect(try DatabaseFileInspector(path: path).sqlite3("PRAGMA integrity_check").stdout == "ok\n")
        print(
            "RELIABILITY fsync: --durability full with fsync failing (EIO) for 10 orders: all 10 refused with 503, "
                + "the 20 around them acknowledged and kept across kill -9; retries stored the 10 once each")
    }
}
