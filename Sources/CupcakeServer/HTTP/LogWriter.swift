import CMicroHTTPD
import Foundation

/// Collects log lines in memory and writes them out in chunks, so a request costs a copy into a
/// buffer rather than a `write` to standard error of its own.
///
/// A background thread ("cupcake-log") writes whatever has gathered, `interval` after the first
/// line of a chunk arrived, or at once after an urgent line. ``flush()`` writes on the calling
/// thread, in order with the thread's chunks.
/// When the sink falls behind (a standard error nobody reads fills its pipe), lines past
/// `capacity` bytes are dropped and counted, never stalling a request, and the count is written
/// once the sink takes data again.
final class LogWriter: @unchecked Sendable {
    // Safe: `pending`, `dropped` and `closed` are only touched while holding `condition`;
    // `spare` only while holding `writing`, which also keeps chunks in order.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var dropped = 0
    private var closed = false
    private var urgent = false
    private let writing = NSLock()
    private var spare: [UInt8] = []
    private let sink: @Sendable ([UInt8]) -> Void
    private let capacity: Int
    private let intervalMicroseconds: UInt32

    /// - Parameters:
    ///   - background: whether a thread writes chunks out; without it only ``flush()`` does.
    ///   - interval: how long the thread lets lines gather before it writes them.
    ///   - capacity: bytes held at most while the sink is behind.
    ///   - sink: writes one chunk of whole lines.
    init(
        background: Bool, interval: Duration = .milliseconds(50), capacity: Int = 4 << 20,
        sink: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.sink = sink
        self.capacity = capacity
        let (seconds, attoseconds) = interval.components
        intervalMicroseconds = UInt32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        pending.reserveCapacity(64 * 1024)
        guard background else { return }
        let thread = Thread { [self] in
            // Foundation's Thread.name does not reach the kernel on Linux; 15 bytes at most.
            pthread_setname_np(pthread_self(), "cupcake-log")
            run()
        }
        thread.start()
    }

    /// Adds one line, written by `line` into the pending bytes; drops it when the sink is behind.
    /// An `urgent` line is written without waiting for others to gather. Never waits for the sink.
    func append(urgent: Bool = false, _ line: (inout [UInt8]) -> Void) {
        condition.lock()
        guard pending.count < capacity else {
            dropped += 1
            condition.unlock()
            return
        }
        let wake = pending.isEmpty || (urgent && !self.urgent)
        line(&pending)
        if urgent { self.urgent = true }
        condition.unlock()
        // Signalled after unlocking, so the writer does not wake only to wait for the lock.
        if wake { condition.signal() }
    }

    /// Writes everything pending now, in order with what the thread has written.
    func flush() {
        writing.lock()
        defer { writing.unlock() }
        condition.lock()
        var chunk = pending
        pending = spare
        let lost = dropped
        dropped = 0
        urgent = false
        condition.unlock()
        if lost > 0 {
            chunk.append(
                contentsOf: "cupcake serve: \(lost) access-log lines dropped: standard error did not keep up\n".utf8)
        }
        if !chunk.isEmpty { sink(chunk) }
        chunk.removeAll(keepingCapacity: true)
        spare = chunk
    }

    /// Stops the thread after it writes what is pending; later lines need ``flush()``.
    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
        flush()
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty, dropped == 0, !closed { condition.wait() }
            let stop = closed
            let now = urgent
            condition.unlock()
            if stop { return }
            if !now { usleep(intervalMicroseconds) }
            flush()
        }
    }

    /// Writes a chunk to a file descriptor whole: after a short write the rest, after EINTR
    /// again, and on a non-blocking descriptor it waits until it can write (up to a second a
    /// wait). Anything else (a closed descriptor, a full disk) loses the chunk: a log line is not
    /// worth failing a request for.
    static func fileDescriptorSink(_ fd: Int32) -> @Sendable ([UInt8]) -> Void {
        { chunk in
            chunk.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, base + offset, buffer.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0, errno == EINTR {
                        continue
                    } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                        var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                        guard poll(&ready, 1, 1000) > 0 else { return }
                    } else {
                        return
                    }
                }
            }
        }
    }
}
