import CupcakeJSON
import Foundation

/// A deliberately plain HTTP/1.1 client over a socket, for tests that need control no real
/// client gives: no Content-Type at all, hostile bytes, stalled uploads. Every request sends
/// `Connection: close` and reads to the end, with a deadline.
public enum RawHTTP {
    /// An answer, split into status, headers and body.
    public struct Response: Sendable {
        /// The status code (0 when nothing came back).
        public var status: Int
        /// Headers, lower-cased names.
        public var headers: [String: String]
        /// The body bytes.
        public var body: Data

        /// The body as a JSON object, if it is one.
        public var json: [String: Any]? {
            (try? JSONValue.parse(body))?.foundationValue as? [String: Any]
        }

        /// The body as text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends one request and reads the answer. A body goes with `Content-Type:
    /// application/json` unless `headers` names a type or `jsonContentType` is false.
    public static func request(
        port: Int, method: String, path: String, headers: [String: String] = [:], body: Data? = nil,
        timeout: Double = 10, jsonContentType: Bool = true, from source: String? = nil
    ) throws -> Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        var headers = headers
        if body != nil, jsonContentType, !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = "application/json"
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            head += "\(name): \(value)\r\n"
        }
        if let body, headers.keys.first(where: { $0.lowercased() == "content-length" }) == nil {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        var bytes = Data(head.utf8)
        if let body { bytes.append(body) }
        return try exchange(port: port, bytes: bytes, timeout: timeout, from: source)
    }

    /// A JSON POST to /api/cupcakes with optional extra headers.
    public static func postOrder(
        port: Int, json: String, headers: [String: String] = [:], from source: String? = nil
    ) throws -> Response {
        try request(
            port: port, method: "POST", path: "/api/cupcakes",
            headers: ["Content-Type": "application/json"].merging(headers) { $1 }, body: Data(json.utf8),
            from: source)
    }

    /// Sends raw bytes and reads until the server closes or the deadline passes.
    public static func exchange(port: Int, bytes: Data, timeout: Double = 10, from source: String? = nil) throws
        -> Response
    {
        let socket = try TestSocket(port: port, timeout: timeout, from: source)
        // A server may answer (413) and close before the whole body is sent: stop sending, and
        // read the answer it gave.
        try? socket.send(bytes)
        let data = socket.receiveAll(deadline: Date().addingTimeInterval(timeout))
        return parse(data)
    }

    /// Splits a raw answer (Content-Length or read-to-close bodies; chunked is not expected).
    public static func parse(_ data: Data) -> Response {
        guard let split = data.range(of: Data("\r\n\r\n".utf8)) else {
            return Response(status: 0, headers: [:], body: data)
        }
        let head = String(decoding: data[data.startIndex..<split.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        var body = Data(data[split.upperBound...])
        if let length = headers["content-length"].flatMap(Int.init), body.count > length {
            body = body.prefix(length)
        }
        return Response(status: status, headers: headers, body: body)
    }
}

/// A blocking TCP socket to 127.0.0.1, closed when released.
public final class TestSocket: @unchecked Sendable {
    // Safe: used by one test thread at a time.
    let fd: Int32
    /// The socket, for tests that read it their own way (poll, peek).
    public var descriptor: Int32 { fd }

    /// Connects to 127.0.0.1, with send and receive timeouts; from `source` (another loopback
    /// address such as 127.0.0.2, to play another client) when given.
    public init(port: Int, timeout: Double = 10, from source: String? = nil) throws {
        // `fd` is set only once the socket is connected: a class whose initializer throws after
        // its properties are set runs `deinit`, and a second close of a number the kernel may
        // already have given to another thread's socket (a server's connection) would close that.
        fd = try Self.connected(port: port, timeout: timeout, from: source)
    }

    /// A socket connected to 127.0.0.1:`port`; on failure it is closed here, once.
    private static func connected(port: Int, timeout: Double, from source: String?) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError(message: "socket: \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let code = errno
                close(fd)
                throw TestSocketError(message: "bind to \(source): \(String(cString: strerror(code)))")
            }
        }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        guard LoopbackSockets.connect(fd, port: port) == 0 else {
            let code = errno
            close(fd)
            throw TestSocketError(message: "connect to 127.0.0.1:\(port): \(String(cString: strerror(code)))")
        }
        return fd
    }

    deinit { close(fd) }

    /// Sends all the bytes.
    public func send(_ data: Data) throws {
        var offset = 0
        while offset < data.count {
            let sent = data.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress?.advanced(by: offset), data.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw TestSocketError(message: "send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Reads until the peer closes, an error, or the deadline.
    public func receiveAll(deadline: Date) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count == 0 {
                break
            } else if errno != EINTR {
                break
            }
        }
        return data
    }

    /// Reads one answer on a kept-alive connection: the head, then Content-Length bytes of body.
    /// Returns `nil` if it is not complete by the deadline or the peer closes first.
    public func receiveResponse(deadline: Date) -> RawHTTP.Response? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            if let split = data.range(of: Data("\r\n\r\n".utf8)) {
                let response = RawHTTP.parse(data)
                let length = response.headers["content-length"].flatMap(Int.init) ?? 0
                if data.count - split.upperBound >= length { return response }
            }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let waitMilliseconds = max(1, Int32(min(deadline.timeIntervalSinceNow, 1) * 1000))
            guard poll(&ready, 1, waitMilliseconds) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count == 0 || errno != EINTR {
                return nil
            }
        }
        return nil
    }

    /// Whether the peer has closed the connection (non-blocking check).
    public func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }
}

/// A socket failure in a test helper.
public struct TestSocketError: Error, CustomStringConvertible {
    /// What failed.
    public var message: String
    /// Creates an error.
    public init(message: String) { self.message = message }
    public var description: String { message }
}

extension JSONValue {
    /// The value as Foundation's plain types (`[String: Any]`, `[Any]`, `String`, `Int`,
    /// `Double`, `Bool`, `NSNull`), for tests that read answers loosely.
    public var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let flag): flag
        case .integer(let number): Int(exactly: number) ?? Double(number)
        case .number(let number): number
        case .string(let text): text
        case .array(let elements): elements.map(\.foundationValue)
        case .object(let members):
            Dictionary(members.map { ($0.key, $0.value.foundationValue) }, uniquingKeysWith: { $1 })
        }
    }
}
