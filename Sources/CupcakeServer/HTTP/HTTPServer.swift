import CMicroHTTPD
import Foundation
import Synchronization

/// Serves HTTP with GNU libmicrohttpd: one event loop (an MHD daemon polled with epoll) per
/// worker thread, sized to the cores by default, all sharing one listening socket.
///
/// Owns the daemons and the socket: `start()` opens them, `shutdown(grace:)` stops accepting,
/// lets requests in flight finish, then frees them. A handler may answer later (at the end of
/// the loop's pass, or from another thread) without holding anything up.
public final class HTTPServer: @unchecked Sendable {
    // Safe: `loops` and `listenSocket` are written only by start() and shutdown(), which the
    // owner calls once each from one thread (`loops` under `loopsLock`, which wake(worker:)
    // reads it under); the loops' threads only read the immutable fields.

    /// How the server listens and what it tolerates.
    public struct Limits: Sendable {
        /// Largest body accepted, in bytes.
        public var bodyBytes: Int = 64 * 1024
        /// Most connections at once.
        public var connections: Int = 1024
        /// Seconds a connection may sit idle (or stall mid-request) before it is dropped.
        public var idleTimeoutSeconds: Int = 15
        /// Worker threads; 0 means one per core.
        public var threads: Int = 0

        /// Default limits.
        public init() {}
    }

    private let host: String
    private let requestedPort: Int
    let limits: Limits
    let handler: any HTTPHandler
    let log: AccessLog
    /// The request headers copied into each ``HTTPRequest``.
    let headerNames: [String]
    private var loops: [EventLoop] = []
    private let loopsLock = NSLock()
    private var listenSocket: Int32 = -1
    /// Requests that have begun and not yet completed.
    let activeRequests = Atomic<Int>(0)
    /// The port actually bound (useful with port 0).
    public private(set) var port: Int = 0

    /// Creates a server; nothing listens until ``start()``.
    public init(
        host: String, port: Int, limits: Limits = Limits(), handler: any HTTPHandler, log: AccessLog,
        headerNames: [String] = HTTPRequest.headerNames
    ) {
        self.headerNames = headerNames
        self.host = host
        requestedPort = port
        self.limits = limits
        self.handler = handler
        self.log = log
    }

    /// Binds, listens and starts the event loops, one per worker thread.
    ///
    /// - Throws: ``ServerError`` saying why the address cannot be used.
    public func start() throws(ServerError) {
        let (socket, bound, ipv6) = try Self.listen(host: host, port: requestedPort, backlog: 1024)
        listenSocket = socket
        port = bound
        let threads = limits.threads > 0 ? limits.threads : max(1, ProcessInfo.processInfo.activeProcessorCount)
        let count = max(1, min(threads, limits.connections))
        var flags = MHD_USE_EPOLL.rawValue
        if ipv6 { flags |= MHD_USE_IPv6.rawValue }
        var loops: [EventLoop] = []
        for index in 0..<count {
            let loop = EventLoop(index: index, server: self)
            // The connection limit is shared out; the first loops take the remainder.
            let share = limits.connections / count + (index < limits.connections % count ? 1 : 0)
            guard
                loop.startDaemon(
                    flags: flags, listenSocket: socket, connectionLimit: share,
                    idleTimeoutSeconds: limits.idleTimeoutSeconds)
            else {
                for started in loops { started.stopUnstarted() }
                close(socket)
                listenSocket = -1
                throw ServerError("libmicrohttpd could not start on \(host):\(bound)")
            }
            loops.append(loop)
        }
        loopsLock.withLock { self.loops = loops }
        for loop in loops where !loop.startThread() {
            shutdown(grace: 0)
            throw ServerError("cannot start the server's threads")
        }
    }

    /// Asks event loop `worker` for a pass soon (its handler then gets
    /// ``HTTPHandler/finishPass(worker:)``): work deferred for it is ready. Any thread may call it.
    public func wake(worker: Int) {
        let loops = loopsLock.withLock { self.loops }
        guard loops.indices.contains(worker) else { return }
        loops[worker].wake()
    }

    /// Stops accepting, waits up to `grace` seconds for requests in flight, then stops.
    public func shutdown(grace: Double = 10) {
        guard !loops.isEmpty else { return }
        for loop in loops { loop.requestStop(grace: grace) }
        for loop in loops {
            loop.join()
            loop.stopUnstarted()
        }
        loopsLock.withLock { loops = [] }
        if listenSocket >= 0 {
            close(listenSocket)
            listenSocket = -1
        }
    }

    /// Opens a listening TCP socket, so a bad address gets our own clear error.
    private static func listen(host: String, port: Int, backlog: Int32) throws(ServerError) -> (Int32, Int, Bool) {
        guard (0...65535).contains(port) else { throw ServerError("port \(port) is not in 0...65535") }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &info)
        guard status == 0, let first = info else {
            throw ServerError("cannot resolve host '\(host)': \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(info) }
        let family = first.pointee.ai_family
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ServerError("cannot listen on \(host):\(port): \(reason)")
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ServerError("cannot listen on \(host):\(port): \(reason)")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let boundPort = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> Int in
                guard getsockname(fd, address, &length) == 0 else { return port }
                if family == AF_INET6 {
                    return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        Int(UInt16(bigEndian: $0.pointee.sin6_port))
                    }
                }
                return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin_port))
                }
            }
        }
        return (fd, boundPort, family == AF_INET6)
    }
}

/// Why the server could not start.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
