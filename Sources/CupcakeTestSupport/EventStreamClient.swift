import CupcakeJSON
import Foundation
import Glibc

/// A Server-Sent Events client for tests, on a raw loopback socket: it asks with HTTP/1.0, so
/// the stream comes unchunked and ends when the server closes it, and reads message by message.
public final class EventStreamClient: @unchecked Sendable {
    // Safe: used by one test thread at a time.
    /// One message (or comment) of the stream.
    public struct Message: Sendable, Equatable {
        /// `id:`, if the message had one.
        public var id: String?
        /// `event:`, if any.
        public var event: String?
        /// The `data:` lines joined by newlines.
        public var data: String
        /// A comment (a line beginning with `:`), such as a heartbeat.
        public var isComment: Bool
    }

    private let socket: TestSocket
    private var buffer = Data()
    /// The answer's status (0 if none came).
    public private(set) var status = 0
    /// The answer's headers, lower-cased names.
    public private(set) var headers: [String: String] = [:]
    /// Whether the server closed the stream.
    public private(set) var isClosed = false

    /// Connects (from `source`, another loopback address, when given), asks for `path` and
    /// reads the answer's head.
    public init(
        port: Int, path: String, headers: [String: String] = [:], from source: String? = nil, timeout: Double = 10
    ) throws {
        socket = try TestSocket(port: port, timeout: timeout, from: source)
        var head = "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try socket.send(Data((head + "\r\n").utf8))
        let deadline = Date().addingTimeInterval(timeout)
        while buffer.range(of: Data("\r\n\r\n".utf8)) == nil, Date() < deadline, fill(until: deadline) {}
        guard let end = buffer.range(of: Data("\r\n\r\n".utf8)) else { return }
        let response = RawHTTP.parse(buffer[..<end.upperBound])
        status = response.status
        self.headers = response.headers
        buffer = Data(buffer[end.upperBound...])
    }

    /// Reads more bytes, waiting until `deadline`; false when the stream closed or time ran out.
    private func fill(until deadline: Date) -> Bool {
        guard !isClosed else { return false }
        var ready = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        let wait = Int32(max(1, min(deadline.timeIntervalSinceNow, 1) * 1000))
        guard poll(&ready, 1, wait) > 0 else { return Date() < deadline }
        var bytes = [UInt8](repeating: 0, count: 65536)
        let count = recv(socket.descriptor, &bytes, bytes.count, 0)
        if count > 0 {
            buffer.append(contentsOf: bytes[0..<count])
            return true
        }
        if count == 0 || (errno != EINTR && errno != EAGAIN) { isClosed = true }
        return !isClosed
    }

    /// The next message or comment; nil when the stream closed or nothing came by `deadline`.
    public func next(deadline: Date) -> Message? {
        while true {
            if let end = buffer.range(of: Data("\n\n".utf8)) {
                let block = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer = Data(buffer[end.upperBound...])
                var message = Message(id: nil, event: nil, data: "", isComment: false)
                var data: [String] = []
                for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                    if line.hasPrefix(":") {
                        message.isComment = true
                    } else if line.hasPrefix("id: ") {
                        message.id = String(line.dropFirst(4))
                    } else if line.hasPrefix("event: ") {
                        message.event = String(line.dropFirst(7))
                    } else if line.hasPrefix("data: ") {
                        data.append(String(line.dropFirst(6)))
                    }
                }
                message.data = data.joined(separator: "\n")
                return message
            }
            guard Date() < deadline, fill(until: deadline) else { return nil }
        }
    }

    /// The next message that is an event (not a comment or a `retry:` line), or nil.
    public func nextEvent(deadline: Date) -> Message? {
        while let message = next(deadline: deadline) {
            if message.event != nil { return message }
        }
        return nil
    }

    /// The event's data as a JSON object.
    public static func json(_ message: Message) -> [String: Any] {
        (try? JSONValue.parse(Data(message.data.utf8)))?.foundationValue as? [String: Any] ?? [:]
    }
}
