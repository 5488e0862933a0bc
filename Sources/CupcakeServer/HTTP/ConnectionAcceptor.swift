import CMicroHTTPD
import Foundation
import Synchronization

/// Accepts connections on the listening socket and hands each to libmicrohttpd's thread pool.
///
/// When every worker watches the listening socket itself, whichever worker wakes first takes a
/// burst of up to ten connections, so a client opening 32 connections at once often lands on one
/// worker while the other idles (measured: one worker at 100% and 25k req/s instead of 36k).
/// `MHD_add_connection` on the pool instead places each connection by its descriptor, which
/// alternates, so the workers share the load evenly. At the connection limit it stops accepting
/// and leaves new clients waiting in the listen backlog, as libmicrohttpd itself would.
final class ConnectionAcceptor: @unchecked Sendable {
    // Safe: `daemon` and the descriptors are set before the thread starts and never change;
    // `started`, `stopping` and `openConnections` are atomics.
    private let listenSocket: Int32
    private let daemon: OpaquePointer
    private let limit: Int
    /// Written to wake the accept thread when the server stops.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let started = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Connections libmicrohttpd holds now, counted through its connection notifications.
    let openConnections = Atomic<Int>(0)

    /// Prepares to accept on `listenSocket` (made non-blocking here) for `daemon`.
    init?(listenSocket: Int32, daemon: OpaquePointer, limit: Int) {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return nil }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let flags = fcntl(listenSocket, F_GETFL)
        guard flags >= 0, fcntl(listenSocket, F_SETFL, flags | O_NONBLOCK) == 0 else {
            close(pipeEnds[0])
            close(pipeEnds[1])
            return nil
        }
        self.listenSocket = listenSocket
        self.daemon = daemon
        self.limit = limit
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
    }

    /// Starts the accept thread.
    func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            pthread_setname_np(pthread_self(), "cupcake-accept")
            run()
            finished.signal()
        }
        thread.start()
    }

    /// Stops accepting and waits for the accept thread to finish. New clients are refused once
    /// the owner closes the listening socket.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if started.load(ordering: .acquiring) {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
            finished.wait()
        }
        close(wakeRead)
        close(wakeWrite)
    }

    private func run() {
        var fds = [
            pollfd(fd: listenSocket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        while !stopping.load(ordering: .acquiring) {
            // At the limit, leave new clients in the backlog until a connection closes.
            if openConnections.load(ordering: .relaxed) >= limit {
                fds[0].events = 0
                _ = poll(&fds, 2, 5)
                continue
            }
            fds[0].events = Int16(POLLIN)
            guard poll(&fds, 2, -1) >= 0 else {
                // Interrupted: ask again (revents are stale). Anything else: back off, then ask.
                if errno != EINTR { usleep(10_000) }
                continue
            }
            if fds[1].revents != 0 { return }
            if fds[0].revents != 0 { acceptReady() }
        }
    }

    /// Accepts what is waiting (a bounded burst) and hands each connection to the pool.
    private func acceptReady() {
        for _ in 0..<64 {
            guard openConnections.load(ordering: .relaxed) < limit else { return }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(listenSocket, $0, &length, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
                }
            }
            guard client >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: back off rather than spin on a ready socket.
                    usleep(10_000)
                    return
                default: return
                }
            }
            // libmicrohttpd owns the socket from here, and closes it if no worker has room.
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    MHD_add_connection(daemon, client, $0, length)
                }
            }
        }
    }
}

/// MHD's connection notification: keeps ``ConnectionAcceptor/openConnections`` current, and
/// registers the connection with the ``ConnectionWatch`` (its state is the socket context).
let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        server.acceptor?.openConnections.add(1, ordering: .relaxed)
        server.metrics.connectionOpened()
        if let watch = server.watch, let connection, let socketContext {
            let address = peerAddress(of: connection)
            let state = watch.started(fd: cupcake_connection_fd(connection), address: address)
            socketContext.pointee = Unmanaged.passRetained(state).toOpaque()
            if !server.perClient.opened(address) {
                // Over the per-address limit: libmicrohttpd still owns the descriptor and closes it.
                server.log.limited(.connections)
                server.metrics.connectionRefused()
                shutdown(state.fd, Int32(SHUT_RDWR))
            }
        }
    case .CONNECTION_NOTIFY_CLOSED:
        server.acceptor?.openConnections.subtract(1, ordering: .relaxed)
        server.metrics.connectionClosed()
        if let watch = server.watch, let socketContext, let raw = socketContext.pointee {
            let state = Unmanaged<ConnectionWatch.Connection>.fromOpaque(raw).takeRetainedValue()
            socketContext.pointee = nil
            watch.closed(state)
            server.perClient.closed(state.address)
        }
    default: break
    }
}

/// The watch's state for a connection, if it has one.
func watchedConnection(_ connection: OpaquePointer) -> ConnectionWatch.Connection? {
    guard let raw = cupcake_connection_socket_context(connection) else { return nil }
    return Unmanaged<ConnectionWatch.Connection>.fromOpaque(raw).takeUnretainedValue()
}
