import Glibc
import Synchronization

/// Catches SIGINT and SIGTERM, from the moment ``install()`` returns, without letting either
/// kill the process: `cupcake serve` installs it before it starts listening, so a supervisor
/// that sends SIGTERM as soon as it sees the startup line is never ignored.
///
/// The handler is our own `sigaction`, installed synchronously, and does the one
/// async-signal-safe thing: it writes the signal's number to a pipe. A thread of its own
/// unblocks the two signals (a process may start with them blocked: one
/// spawned from a libdispatch worker inherits that thread's mask) and reads the pipe, so a
/// signal that arrives before it runs stays pending and is delivered then. (A libdispatch signal
/// source registers its handler later, on its manager thread; the server used one after setting
/// SIG_IGN, and a SIGTERM between the two was discarded, so the server ran on until killed:
/// `MovedFileTests` met it under the full suite's load.)
package final class ShutdownSignal: @unchecked Sendable {
    // Safe: `received` and `waiter` are only touched while holding `lock`.
    private let lock = Mutex(())
    private var received: String?
    private var waiter: CheckedContinuation<String, Never>?

    /// The pipe's write end, for the handler, which can capture nothing. Set once, before the
    /// handler is installed, and never changed.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    /// Starts catching SIGINT and SIGTERM now.
    package static func install() -> ShutdownSignal {
        let shutdown = ShutdownSignal()
        var ends: [Int32] = [-1, -1]
        // Without descriptors the default action stays: the process ends at once.
        guard pipe(&ends) == 0 else { return shutdown }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        writeEnd = ends[1]
        for number in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(ShutdownSignal.writeEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
        let readEnd = ends[0]
        startThread {
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGINT)
            sigaddset(&signals, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) < 0, errno == EINTR {}
            shutdown.deliver(Int32(byte) == SIGINT ? "SIGINT" : "SIGTERM")
        }
        return shutdown
    }

    private func deliver(_ name: String) {
        let waiting = lock.withLock { _ -> CheckedContinuation<String, Never>? in
            received = name
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: name)
    }

    /// Suspends until the first SIGINT or SIGTERM since ``install()`` (at once if one came
    /// already); returns its name.
    package func wait() async -> String {
        await withCheckedContinuation { continuation in
            let already = lock.withLock { _ -> String? in
                if let received { return received }
                waiter = continuation
                return nil
            }
            if let already { continuation.resume(returning: already) }
        }
    }

    /// Runs `body` on a detached thread of its own (a pthread: the client links no Foundation).
    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Work {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Work>.fromOpaque(context).takeRetainedValue().body()
                return nil
            }, context)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Work>.fromOpaque(context).release()
        }
    }
}
