import Foundation

/// Group commit without a writer thread. Each HTTP event loop queues the orders of a pass over
/// its ready connections in its own lane and, when the pass ends, calls ``commit(lane:)``: if no
/// commit is running, that loop commits every lane's queued orders in one transaction, on its
/// own thread; if one is running, the loop goes back to the network and the committer wakes it
/// when done (``setWake(_:)``), so orders queue up behind a commit instead of a thread blocking.
/// Under load a commit carries everything that arrived during the previous one, so its cost
/// (and its fsync, with ``Durability/full``) is shared by the batch; no dedicated thread has to
/// be woken for each batch, and each answer is sent by the loop that read its request.
public final class GroupCommitter: @unchecked Sendable {
    // Safe: `lanes`, `committing`, `stopping` and `wake` are read and written only while holding
    // `lock`.
    private struct Pending {
        var order: NewOrder
        var completion: @Sendable (Result<StoredOrder, StorageError>) -> Void
    }

    private let store: any OrderStore
    private let lock = NSLock()
    private var lanes: [Int: [Pending]] = [:]
    private var committing = false
    private var stopping = false
    private var wake: (@Sendable (Int) -> Void)?

    /// Creates a committer in front of `store`.
    public init(store: any OrderStore) {
        self.store = store
    }

    /// Sets how to wake a lane's loop whose orders are left queued when a commit ends (they were
    /// queued while it ran); that loop then calls ``commit(lane:)``.
    public func setWake(_ wake: @escaping @Sendable (Int) -> Void) {
        lock.withLock { self.wake = wake }
    }

    /// Queues an order in `lane`; `completion` runs on the thread that commits it.
    public func submit(
        _ order: NewOrder, lane: Int, completion: @escaping @Sendable (Result<StoredOrder, StorageError>) -> Void
    ) {
        lock.lock()
        if stopping {
            lock.unlock()
            completion(.failure(StorageError(.unavailable, "shutting down")))
            return
        }
        lanes[lane, default: []].append(Pending(order: order, completion: completion))
        lock.unlock()
    }

    /// Commits every queued order (of every lane) in one transaction and runs the completions,
    /// unless a commit is already running: then returns at once, and that commit wakes `lane`
    /// when it ends if orders are still queued there.
    ///
    /// - Returns: how many orders were answered.
    @discardableResult
    public func commit(lane: Int) -> Int {
        lock.lock()
        if committing {
            lock.unlock()
            return 0
        }
        committing = true
        var batch: [Pending] = []
        for key in lanes.keys.sorted() {
            batch += lanes[key] ?? []
        }
        lanes.removeAll(keepingCapacity: true)
        lock.unlock()
        if !batch.isEmpty { commit(batch) }
        let (waiting, wake) = lock.withLock { () -> ([Int], (@Sendable (Int) -> Void)?) in
            committing = false
            return (lanes.filter { !$0.value.isEmpty }.map(\.key), self.wake)
        }
        for other in waiting where other != lane {
            wake?(other)
        }
        return batch.count
    }

    /// Refuses new orders (they fail as `.unavailable`) and commits whatever is still queued.
    public func shutdown() {
        lock.withLock { stopping = true }
        commit(lane: 0)
    }

    private func commit(_ batch: [Pending]) {
        do {
            let stored = try store.insert(batch.map(\.order))
            for (item, order) in zip(batch, stored) {
                item.completion(.success(order))
            }
        } catch {
            guard batch.count > 1 else {
                batch[0].completion(.failure(error))
                return
            }
            // One bad order must not fail its neighbours: commit each alone.
            for item in batch {
                commit([item])
            }
        }
    }
}
