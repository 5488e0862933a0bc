import CSQLite
import Foundation

/// Copies the WAL back into the database from a background thread, with its own connection, in
/// PASSIVE mode, so the writer's commits never pay for it. Runs every `interval` seconds; a final
/// checkpoint runs on `stop()`.
///
/// SQLite starts the WAL over only when a write transaction begins after a checkpoint copied
/// every frame; under continuous writes the writer is always already past that point, and the
/// WAL grew by 2 GB in 20 s of load. So when the WAL passes `restartFrames` (16 MiB), the
/// checkpointer holds the store's write lock for one more PASSIVE pass, which copies the few
/// frames written since the pass before; the next commit then starts the WAL over.
///
/// That locked pass is the one that completes the checkpoint, so it fsyncs the database, and
/// left alone that fsync wrote out every page the cycle's earlier passes had copied (2.2 ms with
/// writes held off, four times a second). So the database is fsynced first, outside the lock,
/// through the checkpoint connection's own SQLite file handle (`syncDatabaseFile`); the locked
/// pass then has only its own few pages to write.
///
/// Nothing here opens, syncs or closes the database or its WAL by a descriptor of its own:
/// closing any descriptor of a file drops every POSIX lock the process holds on it, so a second
/// server could then open the file and acknowledged orders would be lost (docs/RELIABILITY.md,
/// "SQLite's hazards"; `DatabaseLockTests`).
///
/// **A failed sync stops the checkpoints for good, and with them every write** (``failure``;
/// the store then answers 503 until restarted), and so does a commit whose fsync failed
/// (``halt(_:)``). The kernel reports a write-back error once per open file: after a failed
/// fsync the next one on the same descriptor succeeds although the pages never reached the
/// disk, and a checkpoint that then completed would let the next commit overwrite the WAL
/// frames those pages came from. Stopping keeps the WAL whole; a
/// restart copies it into the database again. `FailingSyncTests` runs this with fsync failing.
final class Checkpointer: @unchecked Sendable {
    // Safe: `stopping`, `finished` and `storedFailure` are only touched while holding
    // `condition`; `connection` is used only by the checkpoint thread until it has exited, then
    // by stop().
    private let connection: SQLiteConnection
    private let condition = NSCondition()
    private var stopping = false
    private var finished = false
    private var storedFailure: StorageError?
    private let interval: TimeInterval
    private let walSyncInterval: TimeInterval
    private let restartFrames: Int
    private let exclusively: @Sendable (() -> Void) -> Void

    /// - Parameter exclusively: runs a body with the store's writes held off.
    init(
        path: String, durability: Durability, interval: TimeInterval = 0.25, walSyncInterval: TimeInterval = 0.01,
        restartFrames: Int = 4096, exclusively: @escaping @Sendable (() -> Void) -> Void
    ) throws(StorageError) {
        self.restartFrames = restartFrames
        self.exclusively = exclusively
        self.interval = interval
        self.walSyncInterval = min(walSyncInterval, interval)
        connection = try SQLiteConnection(path: path)
        // FULL durability fsyncs checkpoints as SQLite's FULL mode does; process durability keeps
        // NORMAL, which still fsyncs a checkpoint (skipping it let dirty pages pile up until the
        // kernel throttled the writer: worse tails) and keeps the file safe on power loss.
        switch durability {
        case .process: try connection.execute("PRAGMA synchronous = NORMAL")
        case .full: try connection.execute("PRAGMA synchronous = FULL")
        }
        let thread = Thread { [self] in
            // Foundation's Thread.name does not reach the kernel on Linux; 15 bytes at most.
            pthread_setname_np(pthread_self(), "cupcake-checkpt")
            run()
        }
        thread.start()
    }

    /// Why checkpoints stopped (a failed read, write or fsync), or nil while they run.
    var failure: StorageError? {
        condition.lock()
        defer { condition.unlock() }
        return storedFailure
    }

    /// Stops the checkpoints, and with them every write, for a failure met elsewhere: a
    /// commit whose fsync failed (with full durability every commit fsyncs the WAL, and this
    /// thread's own sync of it may not come before the disk answers again).
    ///
    /// Called by the writer with the store's write lock held, then taking `condition`, as
    /// ``failure`` is read there too: the lock order is always the write lock, then `condition`.
    /// The thread never waits for the write lock while holding `condition` (it lets go of it
    /// before each checkpoint cycle, whose last pass takes the write lock), so no deadlock.
    func halt(_ failure: StorageError) {
        condition.lock()
        defer { condition.unlock() }
        if storedFailure == nil { storedFailure = failure }
        condition.broadcast()
    }

    private func run() {
        condition.lock()
        while !stopping, storedFailure == nil {
            let checkpointAt = Date().addingTimeInterval(interval)
            while !stopping, storedFailure == nil, Date() < checkpointAt {
                _ = condition.wait(until: min(checkpointAt, Date().addingTimeInterval(walSyncInterval)))
                if stopping { break }
                condition.unlock()
                let synced = connection.syncWALFile()
                condition.lock()
                if let failed = Self.fatal(synced, "the WAL's fsync") { storedFailure = failed }
            }
            if stopping || storedFailure != nil { break }
            condition.unlock()
            let failed = cycle()
            condition.lock()
            if let failed { storedFailure = failed }
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// One checkpoint, and the WAL restart when it is due; a failure that stops everything.
    private func cycle() -> StorageError? {
        // Even a pass that copied everything leaves the WAL growing: the writer was already in
        // its next transaction. One more pass with the writer held off completes at a moment
        // when no transaction is open, so the next commit starts the WAL over.
        let first = connection.checkpointPassive()
        if let failed = Self.fatal(first.code, "a checkpoint") { return failed }
        guard first.code == SQLITE_OK, first.logFrames > restartFrames else { return nil }
        // Catch up without the lock first: each pass copies what arrived during the one before,
        // so the pass with writes held off has only a few frames left to copy.
        for _ in 0..<4 {
            let start = DispatchTime.now().uptimeNanoseconds
            let pass = connection.checkpointPassive()
            if let failed = Self.fatal(pass.code, "a checkpoint") { return failed }
            if DispatchTime.now().uptimeNanoseconds - start < 500_000 { break }
        }
        if let failed = Self.fatal(connection.syncDatabaseFile(), "the database file's fsync") { return failed }
        let caughtUp = connection.checkpointPassive()
        if let failed = Self.fatal(caughtUp.code, "a checkpoint") { return failed }
        var locked = CSQLite.SQLITE_OK
        exclusively { locked = self.connection.checkpointPassive().code }
        return Self.fatal(locked, "a checkpoint")
    }

    /// A failure that must stop the checkpoints: any I/O error (a busy or locked database, or a
    /// full disk, is tried again next time; nothing was counted as copied).
    static func fatal(_ code: Int32, _ what: String) -> StorageError? {
        guard code & 0xff == SQLITE_IOERR else { return nil }
        return StorageError(
            .temporary,
            "\(what) failed (SQLite \(code)), so the database may not hold what the WAL does; no order is "
                + "stored until cupcake serve is restarted on a healthy disk (every acknowledged order is in the WAL)")
    }

    /// The failure that stops every write when `error` is a commit's failed fsync
    /// (`SQLITE_IOERR_FSYNC`, or `SQLITE_IOERR_DIR_FSYNC`), else nil.
    static func failedSync(_ error: StorageError) -> StorageError? {
        guard let code = error.sqliteResult, code == SQLITE_IOERR | 4 << 8 || code == SQLITE_IOERR | 5 << 8 else {
            return nil
        }
        return fatal(code, "a commit's fsync")
    }

    /// Stops the thread (waiting for a checkpoint in progress), runs a last checkpoint unless
    /// one failed, closes.
    func stop() {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            return
        }
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        let failed = storedFailure != nil
        condition.unlock()
        if !failed { try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        connection.close()
    }
}
