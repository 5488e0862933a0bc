import CSQLite
import Foundation

/// Group commit: callers hand in orders one at a time from many threads; a writer thread
/// commits whatever has gathered in a single transaction and then tells every caller. Under load
/// the cost of a commit (and its fsync, with ``Durability/full``) is shared by the whole batch.
///
/// The store says how many writers may commit at once (``OrderStore/concurrentWriters``):
/// SQLite has one writer; PostgreSQL runs each writer's batch as its own transaction on its own
/// connection and flushes concurrent commits to its WAL together, so while one batch waits for
/// its flush the next is already being written.
public final class GroupCommitter: @unchecked Sendable {
    // Safe: `pending`, `stopping`, `runningWriters` and `waitingWriters` are read and written
    // only while holding `condition`; each writer thread's buffers are its own.
    private struct Pending {
        var order: NewOrder
        var completion: @Sendable (Result<StoredOrder, StorageError>) -> Void
    }

    private let store: any OrderStore
    private let maximumBatch: Int
    private let condition = NSCondition()
    private var pending: [Pending] = []
    private var stopping = false
    private var runningWriters: Int
    /// Writers waiting for work (or about to), so the next order must signal one.
    private var waitingWriters = 0
    private let committed: @Sendable (Int) -> Void

    /// Starts the writer threads, as many as `store.concurrentWriters`.
    ///
    /// - Parameter threadStarted: runs first on each writer thread, before any commit (the server
    ///   uses it to choose the thread's CPU).
    ///   - committed: told the size of each batch committed (for metrics).
    public init(
        store: any OrderStore, maximumBatch: Int = 512, threadStarted: @escaping @Sendable () -> Void = {},
        committed: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.committed = committed
        self.store = store
        self.maximumBatch = maximumBatch
        let writers = max(1, store.concurrentWriters)
        runningWriters = writers
        for _ in 0..<writers {
            let thread = Thread { [unowned self] in
                // Foundation's Thread.name does not reach the kernel on Linux.
                pthread_setname_np(pthread_self(), "cupcake-commit")
                threadStarted()
                self.loop()
            }
            thread.start()
        }
    }

    /// Queues an order; `completion` runs on the writer thread once it is committed (or failed).
    public func submit(_ order: NewOrder, completion: @escaping @Sendable (Result<StoredOrder, StorageError>) -> Void) {
        condition.lock()
        if stopping {
            condition.unlock()
            completion(.failure(StorageError(.unavailable, "shutting down")))
            return
        }
        pending.append(Pending(order: order, completion: completion))
        let wake = waitingWriters > 0
        condition.unlock()
        // Signalled after unlocking, so a writer does not wake only to wait for this lock, and
        // only when one is waiting: under load a writer finds the next batch without a wake-up.
        if wake { condition.signal() }
    }

    /// Commits everything already queued, then stops the writer threads.
    public func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while runningWriters > 0 {
            condition.wait()
        }
        condition.unlock()
    }

    private func loop() {
        /// This writer's other batch buffer, reused so taking a batch allocates nothing.
        var spare: [Pending] = []
        while true {
            condition.lock()
            while pending.isEmpty && !stopping {
                waitingWriters += 1
                condition.wait()
                waitingWriters -= 1
            }
            if pending.isEmpty && stopping {
                runningWriters -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            var batch: [Pending]
            if pending.count <= maximumBatch {
                // Swap buffers: the lock is held for a pointer swap, not a copy.
                batch = spare
                swap(&batch, &pending)
            } else {
                batch = Array(pending.prefix(maximumBatch))
                pending.removeFirst(batch.count)
            }
            condition.unlock()
            commit(batch)
            batch.removeAll(keepingCapacity: true)
            spare = batch
        }
    }

    private func commit(_ batch: [Pending]) {
        do {
            let stored = try store.insert(batch.map(\.order))
            committed(stored.count)
            for (item, order) in zip(batch, stored) {
                item.completion(.success(order))
            }
        } catch {
            // A full or failing disk fails every order alike; retrying them one by one would
            // only add failing transactions.
            guard batch.count > 1, error.code != .temporary else {
                for item in batch { item.completion(.failure(error)) }
                return
            }
            // One bad order must not fail its neighbours: commit each alone.
            for item in batch {
                commit([item])
            }
        }
    }
}
