import Dispatch
import Foundation

/// Waits for SIGINT or SIGTERM without letting either kill the process.
enum ShutdownSignal {
    /// Suspends until SIGINT or SIGTERM arrives; returns its name.
    static func wait() async -> String {
        final class Once: @unchecked Sendable {
            // Safe: `fired` and `sources` are only touched while holding `lock`.
            let lock = NSLock()
            var fired = false
            var sources: [any DispatchSourceSignal] = []
        }
        let once = Once()
        return await withCheckedContinuation { continuation in
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    let first = once.lock.withLock { () -> Bool in
                        defer { once.fired = true }
                        return !once.fired
                    }
                    if first { continuation.resume(returning: name) }
                }
                source.resume()
                once.lock.withLock { once.sources.append(source) }
            }
        }
    }
}
