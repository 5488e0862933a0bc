import Foundation

/// Runs blocking work on real threads, all at once (Swift's cooperative pool and GCD would cap
/// how many blocking calls run together on a 2-core machine).
public enum Parallel {
    /// Runs `body(0..<count)` on `count` threads and waits (at most `timeout` seconds) for all.
    /// - Returns: the results, in index order (`nil` where a thread had not finished).
    public static func run<T: Sendable>(_ count: Int, timeout: Double = 60, _ body: @escaping @Sendable (Int) -> T)
        -> [T?]
    {
        let results = ParallelResults<T>(count: count)
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                start.wait()
                let value = body(index)
                results.lock.withLock { results.values[index] = value }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        // Release them together, so they really overlap.
        for _ in 0..<count { start.signal() }
        _ = group.wait(timeout: .now() + timeout)
        return results.lock.withLock { results.values }
    }
}

/// Results gathered from several threads.
private final class ParallelResults<T>: @unchecked Sendable {
    // Safe: `values` is only touched while holding `lock`.
    let lock = NSLock()
    var values: [T?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
}
