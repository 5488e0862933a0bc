import CMicroHTTPD
import Foundation
import Synchronization

/// Drops connections that take too long to send a request.
///
/// libmicrohttpd's timeout is for inactivity only, so a client that sends one byte of its
/// headers every few seconds is never idle and keeps its connection (and a place under the
/// connection limit) forever: a thousand of them lock everyone else out. This gives every
/// request a deadline from the moment its connection is ready for it (accepted, or done with the
/// previous request) until it is fully received. A thread ("cupcake-watch") checks once a second
/// and shuts down the socket of a connection past it; libmicrohttpd then closes the connection
/// as it would any the client hung up.
final class ConnectionWatch: @unchecked Sendable {
    // Safe: `connections` is only touched while holding `lock`; a connection's fields are atomics
    // or immutable.

    /// One connection's state, kept as libmicrohttpd's socket context from "started" to "closed".
    final class Connection: Sendable {
        let fd: Int32
        /// The peer's address, counted by ``ConnectionsPerClient`` until the connection closes.
        let address: String
        /// When the connection became ready for a request (uptime nanoseconds); 0 while a
        /// request has been fully received and is being answered.
        let receivingSince = Atomic<UInt64>(0)

        init(fd: Int32, address: String) {
            self.fd = fd
            self.address = address
            receivingSince.store(ConnectionWatch.now(), ordering: .relaxed)
        }
    }

    private let lock = NSCondition()
    private var connections: [ObjectIdentifier: Connection] = [:]
    private var stopping = false
    private let deadlineNanoseconds: UInt64
    private let interval: Double
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the watch thread.
    /// - Parameter seconds: the time a request may take to arrive in full.
    init(seconds: Int) {
        deadlineNanoseconds = UInt64(max(1, seconds)) * 1_000_000_000
        interval = min(1, Double(max(1, seconds)) / 4)
        let thread = Thread { [self] in
            pthread_setname_np(pthread_self(), "cupcake-watch")
            run()
            finished.signal()
        }
        thread.start()
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A connection started: returns its state, to keep as the socket context.
    func started(fd: Int32, address: String) -> Connection {
        let connection = Connection(fd: fd, address: address)
        lock.withLock { connections[ObjectIdentifier(connection)] = connection }
        return connection
    }

    /// A connection closed. libmicrohttpd closes the socket only after this returns, so the
    /// watch can never shut down a descriptor that has been reused for another connection.
    func closed(_ connection: Connection) {
        _ = lock.withLock { connections.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Stops the watch thread.
    func stop() {
        lock.withLock {
            stopping = true
            lock.signal()
        }
        finished.wait()
    }

    private func run() {
        lock.lock()
        defer { lock.unlock() }
        while !stopping {
            _ = lock.wait(until: Date().addingTimeInterval(interval))
            if stopping { return }
            let now = Self.now()
            for connection in connections.values {
                let since = connection.receivingSince.load(ordering: .relaxed)
                guard since != 0, now > since, now - since > deadlineNanoseconds else { continue }
                // Once: the connection is on its way out.
                connection.receivingSince.store(0, ordering: .relaxed)
                shutdown(connection.fd, Int32(SHUT_RDWR))
            }
        }
    }
}
