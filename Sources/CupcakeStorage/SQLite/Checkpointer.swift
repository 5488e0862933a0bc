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
/// Between checkpoints it asks the kernel every `writebackInterval` seconds to start writing the
/// WAL's dirty pages (`sync_file_range`, which waits for nothing). A checkpoint fsyncs the WAL
/// first; left alone, that fsync wrote out everything since the last one, 15–18 ms of disk
/// writes in one burst every quarter second, and the requests answered meanwhile were the slow
/// ones (82% of those over 3 ms overlapped a checkpoint pass). Each `sync_file_range` is itself
/// a burst (about 0.5 ms of submitting a 25 ms share of the WAL), and the server's slowest
/// requests gathered around them too, so they come every 10 ms, in smaller pieces: every 12.5 ms
/// the p99 was lower than every 25 ms in 5 of 6 rounds, and every 100 ms it was higher in all.
final class Checkpointer: @unchecked Sendable {
    // Safe: `stopping` is only touched while holding `condition`; `connection` is used only
    // by the checkpoint thread until it has exited, then by stop().
    private let connection: SQLiteConnection
    private let condition = NSCondition()
    private var stopping = false
    private var finished = false
    private let interval: TimeInterval
    private let restartFrames: Int
    private let exclusively: @Sendable (() -> Void) -> Void
    private let databasePath: String
    private let walPath: String
    private let writebackInterval: TimeInterval

    /// - Parameter exclusively: runs a body with the store's writes held off.
    init(
        path: String, durability: Durability, interval: TimeInterval = 0.25, writebackInterval: TimeInterval = 0.01,
        restartFrames: Int = 4096, exclusively: @escaping @Sendable (() -> Void) -> Void
    ) throws(StorageError) {
        self.restartFrames = restartFrames
        databasePath = path
        walPath = path + "-wal"
        self.writebackInterval = min(writebackInterval, interval)
        self.exclusively = exclusively
        connection = try SQLiteConnection(path: path)
        // FULL durability fsyncs checkpoints as SQLite's FULL mode does; process durability keeps
        // NORMAL, which still fsyncs a checkpoint (skipping it let dirty pages pile up until the
        // kernel throttled the writer: worse tails) and keeps the file safe on power loss.
        switch durability {
        case .process: try connection.execute("PRAGMA synchronous = NORMAL")
        case .full: try connection.execute("PRAGMA synchronous = FULL")
        }
        self.interval = interval
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
                _ = condition.wait(until: min(checkpointAt, Date().addingTimeInterval(writebackInterval)))
                if stopping { break }
                condition.unlock()
                startWALWriteback()
                condition.lock()
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
                // The pass that completes the checkpoint fsyncs the database, and left alone that
                // fsync wrote out every page the passes before it copied: about 2 ms, with writes
                // held off. Written out here, outside the lock, it leaves the locked pass only the
                // pages copied since (its fsync 0.4 instead of 2.2 ms). One more pass catches up
                // with the frames committed meanwhile.
                syncDatabase()
                _ = connection.checkpointPassive()
                exclusively { _ = self.connection.checkpointPassive() }
            }
            condition.lock()
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Starts write-back of the WAL's dirty pages without waiting for it.
    private func startWALWriteback() {
        withDescriptor(of: walPath) { _ = sync_file_range($0, 0, 0, 2) }  // SYNC_FILE_RANGE_WRITE
    }

    /// Writes the database file's dirty pages out and waits for them (`fdatasync`), without any
    /// lock held. SQLite's own fsync in the checkpoint stays; this only leaves it less to do. A
    /// failure is left for that fsync to meet: Linux reports a write-back error to every
    /// descriptor that was open when it happened, SQLite's included.
    private func syncDatabase() {
        withDescriptor(of: databasePath) { _ = fdatasync($0) }
    }

    /// Runs `body` with a read-only descriptor of the file at `path`, if it opens. Opened each
    /// time (about a hundred times a second), so a WAL that SQLite deleted and made again is
    /// never missed.
    private func withDescriptor(of path: String, _ body: (Int32) -> Void) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        body(descriptor)
        close(descriptor)
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
