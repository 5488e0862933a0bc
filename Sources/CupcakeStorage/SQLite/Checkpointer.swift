import Foundation

/// Copies the WAL back into the database from a background thread, with its own connection, in
/// PASSIVE mode: it never blocks the writer or readers, and the writer's commits never pay for
/// it. Runs every `interval` seconds; a final checkpoint runs on `stop()`.
final class Checkpointer: @unchecked Sendable {
    // Safe: `stopping` is only touched while holding `condition`; `connection` is used only
    // by the checkpoint thread until it has exited, then by stop().
    private let connection: SQLiteConnection
    private let condition = NSCondition()
    private var stopping = false
    private var finished = false
    private let interval: TimeInterval

    init(path: String, durability: Durability, interval: TimeInterval = 0.5) throws(StorageError) {
        connection = try SQLiteConnection(path: path)
        // FULL durability fsyncs checkpoints as SQLite's FULL mode does; process durability keeps
        // NORMAL, which still fsyncs a checkpoint (skipping it let dirty pages pile up until the
        // kernel throttled the writer: worse tails) and keeps the file safe on power loss.
        switch durability {
        case .process: try connection.execute("PRAGMA synchronous = NORMAL")
        case .full: try connection.execute("PRAGMA synchronous = FULL")
        }
        self.interval = interval
        let thread = Thread { [self] in run() }
        thread.name = "cupcake-checkpoint"
        thread.start()
    }

    private func run() {
        condition.lock()
        while !stopping {
            _ = condition.wait(until: Date().addingTimeInterval(interval))
            if stopping { break }
            condition.unlock()
            try? connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
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
