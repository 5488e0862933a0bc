import Foundation

/// A private PostgreSQL cluster for one test that stops, crashes or restarts the database
/// (the shared ``PostgresFixture`` server must stay up for the other tests): `initdb` in a
/// temporary folder, then `pg_ctl`, run as the `postgres` user when the tests run as root.
/// Stopped (immediately) and removed when released.
public final class PostgresCluster: @unchecked Sendable {
    // Safe: used from one test at a time.
    /// Holds the data directory, the socket and the log.
    public let directory: TemporaryDirectory
    /// The port it listens on, on 127.0.0.1.
    public private(set) var port = 0
    private let bin: URL

    /// The URL of its `postgres` database.
    public var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

    /// Creates the cluster and starts it (a few seconds: `initdb`).
    public init() throws {
        bin = try Self.binaries()
        directory = try Self.ownedDirectory()
        let initdb = try run(
            "initdb", ["-D", directory.path("data"), "-A", "trust", "-U", "postgres", "--no-locale", "-E", "UTF8"])
        guard initdb.status == 0 else { throw TestSocketError(message: "initdb: \(initdb.stderr)") }
        try start()
    }

    /// A streaming standby of `primary`: a base backup (`pg_basebackup -R`), started, connected
    /// to the primary as `name` (what `synchronous_standby_names` names).
    public init(standbyOf primary: PostgresCluster, name: String) throws {
        bin = try Self.binaries()
        directory = try Self.ownedDirectory()
        let backup = try run(
            "pg_basebackup",
            [
                "-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-D", directory.path("data"), "-R",
                "-X", "stream", "-c", "fast",
            ])
        guard backup.status == 0 else { throw TestSocketError(message: "pg_basebackup: \(backup.stderr)") }
        let settings = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.path("data/postgresql.auto.conf")))
        try settings.seekToEnd()
        try settings.write(
            contentsOf: Data(
                "primary_conninfo = 'host=127.0.0.1 port=\(primary.port) user=postgres application_name=\(name)'\n".utf8
            ))
        try settings.close()
        try start()
    }

    private static func binaries() throws -> URL {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw TestSocketError(message: "PostgreSQL is not installed (scripts/test installs Debian's postgresql)")
        }
        return URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin")
    }

    private static func ownedDirectory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        if getuid() == 0 {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: directory.url.path)
        }
        return directory
    }

    /// Makes `standby` (an application name) synchronous: from when this returns, a COMMIT here
    /// returns only once that standby has flushed its WAL.
    public func requireSynchronousStandby(_ standby: String) throws {
        try psql("ALTER SYSTEM SET synchronous_standby_names = '\(standby)'")
        try psql("SELECT pg_reload_conf()")
        for _ in 0..<300 {
            let state = try psql("SELECT sync_state FROM pg_stat_replication WHERE application_name = '\(standby)'")
            if state.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "sync" { return }
            usleep(50_000)
        }
        throw TestSocketError(message: "the standby \(standby) did not become synchronous")
    }

    /// Waits until `standby` streams from this cluster (asynchronously, unless made synchronous).
    public func waitForStandby(_ standby: String) throws {
        for _ in 0..<300 {
            let count = try psql(
                "SELECT count(*) FROM pg_stat_replication WHERE application_name = '\(standby)' AND state = 'streaming'"
            )
            if count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1" { return }
            usleep(50_000)
        }
        throw TestSocketError(message: "the standby \(standby) does not stream")
    }

    /// The machine dies: SIGKILL to the postmaster (its backends end as they notice).
    public func killPostmaster() {
        guard let text = try? String(contentsOfFile: directory.path("data/postmaster.pid"), encoding: .utf8),
            let pid = text.split(separator: "\n").first.flatMap({ Int32($0) })
        else { return }
        kill(pid, SIGKILL)
    }

    /// Promotes a standby to primary (`pg_ctl promote`, waiting until it takes writes).
    public func promote() throws {
        let promoted = try run("pg_ctl", ["-D", directory.path("data"), "-w", "-t", "60", "promote"])
        guard promoted.status == 0 else { throw TestSocketError(message: "pg_ctl promote: \(promoted.stderr)") }
    }

    /// Fences an old primary: stopped if it still runs, and marked (`standby.signal`) so that if
    /// it is started again it comes up read-only instead of taking writes beside the new one.
    public func fence() throws {
        stop(immediately: true)
        FileManager.default.createFile(atPath: directory.path("data/standby.signal"), contents: nil)
    }

    /// Whether it is a standby (in recovery, read-only).
    public func isInRecovery() throws -> Bool {
        try psql("SELECT pg_is_in_recovery()").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "t"
    }

    deinit { stop(immediately: true) }

    /// Runs one of PostgreSQL's programs, as `postgres` when we are root. Through a shell that
    /// first closes every descriptor above 2: `pg_ctl start` leaves the server running as its
    /// child, and Foundation's `Process` learns that its child ended when a socket it handed the
    /// child closes; a server that inherited that socket would keep it open for its whole life.
    private func run(_ program: String, _ arguments: [String]) throws -> ProcessRunner.Result {
        let path = bin.appendingPathComponent(program).path
        let command = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", path] : [path]
        let closeAndRun =
            #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec "$@""#
        return try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", closeAndRun, "bash"] + command + arguments, timeout: 90)
    }

    /// Starts it (again, on the same port once it has one) and waits until it accepts
    /// connections.
    public func start() throws {
        var failure = ""
        for _ in 0..<5 {
            if port == 0 || !failure.isEmpty { port = try FreePort.next() }
            let started = try run(
                "pg_ctl",
                [
                    "-D", directory.path("data"), "-w", "-t", "60", "-l", directory.path("log"), "-o",
                    "-p \(port) -k \(directory.url.path) -c listen_addresses=127.0.0.1 -c max_connections=200",
                    "start",
                ])
            if started.status == 0 { return }
            failure = started.stderr + ((try? String(contentsOfFile: directory.path("log"), encoding: .utf8)) ?? "")
        }
        throw TestSocketError(message: "pg_ctl start: \(failure)")
    }

    /// Stops it: a fast shutdown, or an immediate one (a crash: recovery runs at the next start).
    public func stop(immediately: Bool = false) {
        _ = try? run("pg_ctl", ["-D", directory.path("data"), "-m", immediately ? "immediate" : "fast", "-w", "stop"])
    }

    /// Runs SQL with `psql` on its `postgres` database.
    @discardableResult
    public func psql(_ sql: String) throws -> ProcessRunner.Result {
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/psql"),
            ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
            timeout: 60)
        guard result.status == 0 else { throw TestSocketError(message: "psql: \(result.stderr)") }
        return result
    }
}
