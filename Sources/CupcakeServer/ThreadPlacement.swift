import CMicroHTTPD
import Foundation

/// Where the service's busy threads run: each HTTP worker on a CPU of its own, and the group
/// commit's writer on the first worker's CPU.
///
/// Left to the scheduler, the writer was preempted twice as often, and every order waits while
/// it is. Pinned this way, a server's p99 under wrk was lower than an unpinned copy's in 13 of
/// 14 alternating runs (docs/PERFORMANCE.md). The other threads (checkpoint, access log,
/// acceptor, watch) stay free.
///
/// Only the default layout is pinned, one worker per CPU the process may use, and only with two
/// or more: with another worker count, or `pinThreads` off, every thread is left to the kernel.
struct ThreadPlacement: Sendable {
    /// The CPU of each worker, in the order the workers were started.
    let workerCPUs: [Int32]
    /// The CPU of the group commit's writer thread.
    var commitCPU: Int32 { workerCPUs[0] }

    /// A placement for `workers` workers on the `allowed` CPUs, or `nil` when there is nothing
    /// to place: fewer than two CPUs, or not one worker for each.
    init?(workers: Int, allowed: [Int32]) {
        guard allowed.count >= 2, workers == allowed.count else { return nil }
        workerCPUs = allowed
    }

    /// The CPUs the calling thread may run on (at the start, the process's), lowest first.
    static func allowedCPUs() -> [Int32] {
        cpus(ofThread: 0)
    }

    /// The CPUs a thread of this process may run on (0 for the calling thread), lowest first;
    /// empty if it cannot be read.
    static func cpus(ofThread thread: pid_t) -> [Int32] {
        var cpus = [Int32](repeating: 0, count: 1024)
        let count = cpus.withUnsafeMutableBufferPointer { cupcake_thread_cpus(thread, $0.baseAddress, 1024) }
        return count > 0 ? Array(cpus[..<Int(count)]) : []
    }

    /// Lets a thread of this process (0 for the calling thread) run only on `cpu`. A failure
    /// (a CPU taken offline meanwhile) leaves it where it was: placement is only an optimization.
    static func pin(thread: pid_t, to cpu: Int32) {
        _ = cupcake_pin_thread(thread, cpu)
    }

    /// The kernel ids of this process's threads.
    static func threadIDs() -> Set<pid_t> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.compactMap { pid_t($0) })
    }

    /// The kernel ids of this process's threads whose name starts with `prefix`.
    static func threads(named prefix: String) -> Set<pid_t> {
        threadIDs().filter { id in
            let name = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
            return name?.hasPrefix(prefix) ?? false
        }
    }
}
