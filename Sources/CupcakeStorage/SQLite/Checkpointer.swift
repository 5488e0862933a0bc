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
/// frames written since the first one; the next commit then starts the WAL over.
///
/// Everything here goes through SQLite (`sqlite3_wal_checkpoint_v2`): this thread never opens,
/// syncs or closes the database or its WAL itself. It used to, to start the WAL's write-back
/// early and to fsync the database before the locked pass, and closing that descriptor of the
/// database dropped the process's POSIX lock on it (closing any descriptor of a file drops every
/// lock the process holds on it), so after the first WAL restart a second server could open the
/// file and acknowledged orders were lost (docs/RELIABILITY.md, "The database lock"). The
/// reliability suite's `DatabaseLockTests` read `/proc/locks` after several WAL restarts.
final class Checkpointer: @unchecked Sendable {
    // Safe: `stopping` and `finished` are only touched while holding `condition`; `connection`
    // is used only by the checkpoint thread until it has exited, then by stop().
    private let connection: SQLiteConnection
    private let condition = NSCondition()
    private var stopping = false
    private var finished = false
    private let interval: TimeInterval
    private let restartFrames: Int
    private let exclusively: @Sendable (() -> Void) -> Void

    /// - Parameter exclusively: runs a body with the store's writes held off.
    init(
        path: String, durability: Durability, interval: TimeInterval = 0.25, restartFrames: Int = 4096,
        exclusively: @escaping @Sendable (() -> Void) -> Void
    ) throws(StorageError) {
        self.restartFrames = restartFrames
        self.exclusively = exclusively
        self.interval = interval
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

    private func run() {
        condition.lock()
        while !stopping {
            let checkpointAt = Date().addingTimeInterval(interval)
            while !stopping, Date() < checkpointAt {
                _ = condition.wait(until: checkpointAt)
            }
            if stopping { break }
            condition.unlock()
            // Even a pass that copied everything leaves the WAL growing: the writer was already
            // in its next transaction. One more pass with the writer held off completes at a
            // moment when no transaction is open, so the next commit starts the WAL over.
            if let (log, _) = connection.checkpointPassive(), log > restartFrames {
                // Catch up without the lock first: each pass copies what arrived during the one
                // before, so the pass with writes held off has only a few frames left to copy.
                for _ in 0..<4 {
                    let start = DispatchTime.now().uptimeNanoseconds
                    _ = connection.checkpointPassive()
                    if DispatchTime.now().uptimeNanoseconds - start < 500_000 { break }
                }
                exclusively { _ = self.connection.checkpointPassive() }
            }
            condition.lock()
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the thread (waiting for a checkpoint in progress), runs a last checkpoint, closes.
    func stop() {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            return
        }
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    }
}
