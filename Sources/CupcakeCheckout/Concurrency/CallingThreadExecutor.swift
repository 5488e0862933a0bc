import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A task executor that runs a task's jobs on the thread that called ``run(_:)``, which waits
/// there until the task is done.
///
/// Why: a one-shot command (`cupcake order`) is one task that mostly waits for one request. On
/// the global executor the task starts the runtime's worker threads, and the answer hops from the
/// request's thread to a worker and then to the main thread waiting for the exit status; measured
/// side by side that was about 0.8 ms of a 12.5 ms `cupcake order` (docs/PERFORMANCE.md). Here the
/// main thread runs the task itself, and a request made while it does blocks that thread
/// (`Transport` asks ``isCurrentThread``): no thread is started at all.
///
/// Why it is safe (docs/RELIABILITY.md, "The client's one thread"):
/// - jobs run one at a time, in the order they were enqueued, only inside ``run(_:)``; blocking
///   the thread in a job (a request, reading a terminal) delays the task's other jobs and nothing
///   else, and nothing the request waits for needs this thread;
/// - every wake-up of the thread is one signal of `wake`: one per enqueued job (signalled after
///   the job is in `jobs`) and one when the task is done. So a wake-up that finds no job is the
///   task's end, and the loop can never sleep with a job queued;
/// - a job enqueued after the task is done (a task it left behind) goes to the global executor,
///   so no job is ever dropped.
package final class CallingThreadExecutor: TaskExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var draining = true
    }

    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)

    /// The threads inside ``run(_:)`` now (as `pthread_self()` numbers; a few at most, so an
    /// array, which unlike a set needs no type lookup by the runtime at start-up).
    private static let threads = Mutex<[UInt]>([])

    private init() {}

    /// Runs `operation` as a task whose jobs run on this thread, and returns its result when it
    /// is done. Child tasks run here too; a `Task {}` started inside does not (it runs on the
    /// global executor, as anywhere else).
    package static func run<Value: Sendable>(_ operation: sending @escaping () async -> Value) -> Value {
        let executor = CallingThreadExecutor()
        let result = Mutex<Value?>(nil)
        let thread = UInt(pthread_self())
        threads.withLock { $0.append(thread) }
        defer {
            threads.withLock { threads in
                if let index = threads.firstIndex(of: thread) { threads.remove(at: index) }
            }
        }
        Task(executorPreference: executor) {
            let value = await operation()
            result.withLock { $0 = value }
            executor.finish()
        }
        executor.drain()
        guard let value = result.withLock({ $0 }) else {
            // `drain` returns only after `finish`, which comes after the result is stored.
            preconditionFailure("the task ended without a result")
        }
        return value
    }

    /// Whether the calling thread is running a task's jobs inside ``run(_:)``, where blocking
    /// (a request through libcurl) holds up nothing but that task.
    package static var isCurrentThread: Bool {
        let thread = UInt(pthread_self())
        return threads.withLock { $0.contains(thread) }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = queue.withLock { queue in
            guard queue.draining else { return false }
            queue.jobs.append(job)
            return true
        }
        if queued {
            wake.signal()
        } else {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Runs jobs as they come until the task is done.
    private func drain() {
        while true {
            wake.wait()
            let next = queue.withLock { $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }
            guard let next else { return }
            next.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Called by the task when it is done: later jobs go to the global executor, and `drain`
    /// wakes once more to return.
    private func finish() {
        queue.withLock { $0.draining = false }
        wake.signal()
    }
}
