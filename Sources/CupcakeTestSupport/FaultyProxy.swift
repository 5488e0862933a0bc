import Foundation

/// A TCP proxy in front of a real server that breaks answers on purpose, for client-fault tests:
/// the server really handles each request (so the order really exists), and the proxy then
/// loses, truncates or cuts the answer, as a dying endpoint or network would.
public final class FaultyProxy: @unchecked Sendable {
    // Safe: `script`, `requests` and `listener` are only touched while holding `lock`.

    /// What to do with one exchange.
    public enum Fault: Sendable {
        /// Forward the server's whole answer.
        case pass
        /// Send the first bytes of the status line, then close: the endpoint died mid-response.
        case dieMidResponse
        /// Send the headers and half the body, then close.
        case truncatedBody
        /// Forward the request, then close without a byte of the answer.
        case closeWithoutAnswer
    }

    private let lock = NSLock()
    private var script: [Fault]
    private var received: [Data] = []
    private var listener: Int32 = -1
    private let backendPort: Int
    /// The port clients connect to.
    public private(set) var port = 0

    /// Starts listening on a free loopback port; faults are used in order, then `.pass`.
    public init(backendPort: Int, script: [Fault]) throws {
        self.backendPort = backendPort
        self.script = script
        let (fd, port) = try LoopbackSockets.listen(purpose: "proxy")
        self.port = port
        listener = fd
        let thread = Thread { [weak self] in self?.acceptLoop(fd) }
        thread.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// The requests that reached the proxy, raw.
    public var requests: [Data] { lock.withLock { received } }

    /// The endpoint URL through the proxy.
    public var endpoint: String { "http://127.0.0.1:\(port)/api/cupcakes" }

    private func acceptLoop(_ fd: Int32) {
        // Bounded: ends when the listener is closed in deinit.
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            let thread = Thread { [weak self] in
                self?.serve(client)
                close(client)
            }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = Self.readMessage(client) else { return }
        let fault = lock.withLock { () -> Fault in
            received.append(request)
            return script.isEmpty ? .pass : script.removeFirst()
        }
        guard let backend = try? TestSocket(port: backendPort), (try? backend.send(request)) != nil,
            let answer = Self.readMessage(backend.fd)
        else { return }
        let bytes: Data
        switch fault {
        case .pass: bytes = answer
        case .dieMidResponse: bytes = answer.prefix(12)
        case .truncatedBody:
            let split = answer.range(of: Data("\r\n\r\n".utf8))?.upperBound ?? answer.startIndex
            bytes = answer.prefix(upTo: split + (answer.endIndex - split) / 2)
        case .closeWithoutAnswer: bytes = Data()
        }
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads one HTTP message: headers, then Content-Length bytes of body.
    static func readMessage(_ fd: Int32) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var expected: Int?
        for _ in 0..<10_000 {
            if let expected, data.count >= expected { return data }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return data.isEmpty ? nil : data }
            data.append(contentsOf: buffer[0..<count])
            if expected == nil, let end = data.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
                let length =
                    head.components(separatedBy: "\r\n")
                    .first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                expected = end.upperBound - data.startIndex + length
            }
        }
        return data
    }
}
