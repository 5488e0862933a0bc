import CMicroHTTPD
import Foundation
import Synchronization

/// Serves HTTP with GNU libmicrohttpd: a thread pool on epoll, sized to the cores by default.
///
/// Owns the MHD daemon, its listening socket and the ``ConnectionAcceptor`` that hands each new
/// connection to the pool: `start()` opens them, `shutdown(grace:)` stops accepting, lets
/// requests in flight finish, then frees them. Handlers may answer later from another thread;
/// the connection is suspended meanwhile so it holds no worker.
public final class HTTPServer: @unchecked Sendable {
    // Safe: `daemon`, `listenSocket` and `acceptor` are written only by start() and shutdown(),
    // which the owner calls once each from one thread; `acceptor` is set before the first
    // connection is accepted, and MHD's threads only read it and the immutable fields.

    /// How the server listens and what it tolerates.
    public struct Limits: Sendable {
        /// Largest body accepted, in bytes.
        public var bodyBytes: Int = 64 * 1024
        /// Largest request head (request line and header fields, as received), in bytes.
        public var headBytes: Int = 16 * 1024
        /// Most header field lines in one request.
        public var headerFields: Int = 100
        /// Longest header field line (name, colon, value), in bytes.
        public var fieldLineBytes: Int = 8 * 1024
        /// Most connections at once.
        public var connections: Int = 1024
        /// Seconds a connection may sit idle (or stall mid-request) before it is dropped.
        public var idleTimeoutSeconds: Int = 15
        /// Seconds a request may take to arrive in full, counted from when its connection was
        /// ready for it; a connection past it is dropped, however steadily it trickles bytes.
        public var requestTimeoutSeconds: Int = 30
        /// Worker threads; 0 means one per core.
        public var threads: Int = 0
        /// Most connections at once from one client address (trusted proxies are not limited).
        public var connectionsPerClient: Int = 64
        /// Proxies whose `X-Forwarded-For` names the client (see ``ClientAddress``).
        public var trustedProxies: Set<String> = []
        /// The number of workers `threads` asks for: one per core the process may use when 0.
        public var workerThreads: Int { threads > 0 ? threads : max(1, ProcessInfo.processInfo.activeProcessorCount) }

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
    /// The same names as C strings, made once (a Swift string passed to C is copied each time).
    let headerCNames: [[CChar]]
    private var daemon: OpaquePointer?
    private var listenSocket: Int32 = -1
    /// Spreads new connections over the workers; set before the first connection arrives.
    private(set) var acceptor: ConnectionAcceptor?
    /// Drops connections whose request takes too long to arrive; set before the daemon starts.
    private(set) var watch: ConnectionWatch?
    /// Connections per client address.
    let perClient: ConnectionsPerClient
    /// What `/metrics` reports; the HTTP layer counts requests and connections.
    let metrics: Metrics
    /// Requests that have begun and not yet completed.
    let activeRequests = Atomic<Int>(0)
    /// The port actually bound (useful with port 0).
    public private(set) var port: Int = 0
    /// Where to pin the workers; set (if at all) before ``start()``.
    var placement: ThreadPlacement?
    /// Whether ``start()`` pinned the workers as `placement` asked.
    private(set) var workersPinned = false

    /// The memory libmicrohttpd gives each connection: it holds the request's head as received
    /// (the request line and header fields stay where they were read, and it adds a copy of the
    /// Cookie field and an index entry per field, cookie and query argument), the part of the
    /// body or of a next request read with it, and then the answer's status line and headers.
    ///
    /// The hazard it avoids: libmicrohttpd 0.9.75 builds the answer's headers in what the head
    /// left free, and when they do not fit it closes the connection without a byte: an order
    /// stored and never answered. So the head may keep at most half of this memory
    /// (``headLimits``, checked before anything is done with the request), and the other half is
    /// left for a read-ahead (at most half the memory, which libmicrohttpd gives its read buffer)
    /// and the answer. `HeadSizeTests` sweeps heads from 1 to 64 KiB, with and without a
    /// pipelined request behind, and checks every request gets its whole answer. libmicrohttpd
    /// zeroes all of it after each request (about 1 µs for 32 KiB).
    static let connectionMemoryBytes = 32 * 1024

    /// What a request's head may be (``RequestHead``), from ``limits``.
    var headLimits: RequestHead.Limits {
        RequestHead.Limits(
            headBytes: limits.headBytes, fields: limits.headerFields, fieldLineBytes: limits.fieldLineBytes,
            memoryBytes: min(limits.headBytes, Self.connectionMemoryBytes / 2), bodyBytes: limits.bodyBytes)
    }

    /// Creates a server; nothing listens until ``start()``.
    public init(
        host: String, port: Int, limits: Limits = Limits(), handler: any HTTPHandler, log: AccessLog,
        headerNames: [String] = HTTPRequest.headerNames, metrics: Metrics = Metrics()
    ) {
        self.metrics = metrics
        self.headerNames = headerNames
        headerCNames = headerNames.map { Array($0.utf8CString) }
        self.host = host
        requestedPort = port
        self.limits = limits
        self.handler = handler
        self.log = log
        perClient = ConnectionsPerClient(limit: limits.connectionsPerClient, exempt: limits.trustedProxies)
    }

    /// Binds, listens and starts the worker threads.
    ///
    /// - Throws: ``ServerError`` saying why the address cannot be used.
    public func start() throws(ServerError) {
        let (socket, bound, ipv6) = try Self.listen(host: host, port: requestedPort, backlog: 1024)
        listenSocket = socket
        port = bound
        let threads = limits.workerThreads
        // The pool does not watch the listening socket; the acceptor hands it each connection.
        var flags =
            MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_NO_LISTEN_SOCKET.rawValue
        if ipv6 { flags |= MHD_USE_IPv6.rawValue }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let notify = unsafeBitCast(requestCompleted as MHD_RequestCompletedCallback, to: UnsafeRawPointer.self)
        let notifyConnection = unsafeBitCast(
            connectionNotified as MHD_NotifyConnectionCallback, to: UnsafeRawPointer.self)
        let logURI = unsafeBitCast(uriLogged, to: UnsafeRawPointer.self)
        let arguments: [any CVarArg] = [
            MHD_OPTION.THREAD_POOL_SIZE.rawValue, UInt32(threads),
            MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(limits.connections),
            MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(limits.idleTimeoutSeconds),
            // The connection's memory holds the request's head as received (and what
            // libmicrohttpd indexes of it) and then the answer's status line and headers; see
            // `connectionMemoryBytes`.
            MHD_OPTION.CONNECTION_MEMORY_LIMIT.rawValue, Self.connectionMemoryBytes,
            MHD_OPTION.NOTIFY_COMPLETED.rawValue, Int(bitPattern: notify), Int(bitPattern: context),
            MHD_OPTION.NOTIFY_CONNECTION.rawValue, Int(bitPattern: notifyConnection), Int(bitPattern: context),
            MHD_OPTION.URI_LOG_CALLBACK.rawValue, Int(bitPattern: logURI), Int(bitPattern: context),
            MHD_OPTION.END.rawValue,
        ]
        let watch = ConnectionWatch(seconds: limits.requestTimeoutSeconds)
        self.watch = watch
        let threadsBefore = placement == nil ? [] : ThreadPlacement.threadIDs()
        let started = withVaList(arguments) { list in
            MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, context, list)
        }
        guard let started else {
            watch.stop()
            close(socket)
            listenSocket = -1
            throw ServerError("libmicrohttpd could not start on \(host):\(bound)")
        }
        guard let acceptor = ConnectionAcceptor(listenSocket: socket, daemon: started, limit: limits.connections)
        else {
            let reason = String(cString: strerror(errno))  // before cleanup can change errno
            MHD_stop_daemon(started)
            watch.stop()
            close(socket)
            listenSocket = -1
            throw ServerError("cannot accept connections on \(host):\(bound): \(reason)")
        }
        daemon = started
        self.acceptor = acceptor
        if let placement { workersPinned = Self.pinWorkers(placement, startedAfter: threadsBefore) }
        acceptor.start()
    }

    /// The client of the request on `connection`: its peer, or behind a trusted proxy the
    /// address that proxy forwards for.
    func clientAddress(of connection: OpaquePointer) -> String {
        // The peer's address as read once when the connection started.
        let peer = watchedConnection(connection)?.address ?? peerAddress(of: connection)
        guard limits.trustedProxies.contains(peer) else { return peer }
        return ClientAddress.of(
            peer: peer, forwardedFor: Self.fieldLines(of: connection, named: "X-Forwarded-For"),
            trustedProxies: limits.trustedProxies)
    }

    /// Every line of a header field, in the order received: a field sent on several lines is
    /// one list (RFC 9110 §5.3), and a proxy that appends its own line (HAProxy's
    /// `option forwardfor`) puts it after the client's.
    static func fieldLines(of connection: OpaquePointer, named name: String) -> [String] {
        RequestHead.fields(of: connection).compactMap { field in
            guard field.nameCount == name.utf8.count, strncasecmp(field.name, name, field.nameCount) == 0 else {
                return nil
            }
            return String(decoding: UnsafeRawBufferPointer(start: field.value, count: field.valueCount), as: UTF8.self)
        }
    }

    /// Pins the threads libmicrohttpd just started, one to each of the placement's CPUs. They are
    /// the process's new threads named `MHD-worker`; each names itself once running, so this
    /// waits for the names (at most 200 ms). If the count is not the pool's (another server
    /// starting in the same process at the same moment), it pins nothing.
    private static func pinWorkers(_ placement: ThreadPlacement, startedAfter earlier: Set<pid_t>) -> Bool {
        var workers: Set<pid_t> = []
        for _ in 0..<200 {
            workers = ThreadPlacement.threads(named: "MHD-worker").subtracting(earlier)
            if workers.count >= placement.workerCPUs.count { break }
            usleep(1_000)
        }
        guard workers.count == placement.workerCPUs.count else { return false }
        for (worker, cpu) in zip(workers.sorted(), placement.workerCPUs) {
            ThreadPlacement.pin(thread: worker, to: cpu)
        }
        return true
    }

    /// Stops accepting, waits up to `grace` seconds for requests in flight, then stops.
    public func shutdown(grace: Double = 10) {
        guard let daemon else { return }
        acceptor?.stop()
        if listenSocket >= 0 {
            close(listenSocket)
            listenSocket = -1
        }
        let deadline = Date().addingTimeInterval(grace)
        while activeRequests.load(ordering: .acquiring) > 0 && Date() < deadline {
            usleep(5_000)
        }
        MHD_stop_daemon(daemon)
        self.daemon = nil
        watch?.stop()
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
extension HTTPServer {
    /// The request headers the handler reads (``headerNames``), with lower-cased names, in one
    /// pass over the request's headers (the first of a repeated one, as a lookup gives).
    func wantedHeaders(of connection: OpaquePointer) -> [String: String] {
        final class Box {
            let names: [String]
            let cNames: [[CChar]]
            var found: [String: String] = [:]
            init(names: [String], cNames: [[CChar]]) {
                self.names = names
                self.cNames = cNames
            }
        }
        let box = Box(names: headerNames, cNames: headerCNames)
        _ = MHD_get_connection_values_n(
            connection, .HEADER_KIND,
            { cls, _, key, keySize, value, valueSize in
                guard let cls, let key, let value else { return .YES }
                let box = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue()
                // Lengths first (the C names end in NUL): most fields are no wanted name.
                for index in box.cNames.indices where box.cNames[index].count == keySize + 1 {
                    let same = box.cNames[index].withUnsafeBufferPointer { name in
                        name.baseAddress.map { strncasecmp(key, $0, keySize) == 0 } ?? false
                    }
                    guard same else { continue }
                    let name = box.names[index]
                    if box.found[name] == nil {
                        box.found[name] = String(
                            decoding: UnsafeRawBufferPointer(start: value, count: valueSize), as: UTF8.self)
                    }
                    break
                }
                return .YES
            }, Unmanaged.passUnretained(box).toOpaque())
        return box.found
    }
}
