import CupcakeJSON
import CupcakeServer
import Foundation

/// A small order endpoint for checkout tests, on real libmicrohttpd: each test scripts the
/// answers (status, body, headers, delay) and reads back what was sent.
public final class ScriptedEndpoint: HTTPHandler, @unchecked Sendable {
    // Safe: `script`, `received` and `placed` are only touched while holding `lock`.

    /// One scripted answer.
    public struct Answer: Sendable {
        /// The status.
        public var status: Int
        /// The body; `nil` echoes the request like reqres (adding id and createdAt).
        public var body: String?
        /// Extra headers.
        public var headers: [(name: String, value: String)]
        /// Seconds to wait before answering.
        public var delay: Double

        /// Creates an answer.
        public init(status: Int, body: String? = nil, headers: [(name: String, value: String)] = [], delay: Double = 0)
        {
            self.status = status
            self.body = body
            self.headers = headers
            self.delay = delay
        }

        /// reqres's 201: the request echoed with a string id and createdAt.
        public static let echo = Answer(status: 201)
    }

    private let lock = NSLock()
    private var script: [Answer]
    private var received: [HTTPRequest] = []
    private var server: HTTPServer?
    /// The last answer repeats once the script runs out.
    private let fallback: Answer
    /// Whether the reqres echo uses a numeric id instead of a string.
    public let numericIDs: Bool

    /// Starts on a free loopback port.
    public init(_ script: [Answer], numericIDs: Bool = false) throws {
        self.script = script
        fallback = script.last ?? .echo
        self.numericIDs = numericIDs
        let server = HTTPServer(
            host: "127.0.0.1", port: 0, handler: self, log: AccessLog(enabled: false, write: { _ in }),
            headerNames: ["content-type", "accept", "user-agent", "idempotency-key", "x-api-key", "x-extra"])
        try server.start()
        self.server = server
    }

    deinit { server?.shutdown(grace: 1) }

    /// The order endpoint's URL.
    public var endpoint: String { "http://127.0.0.1:\(server?.port ?? 0)/api/cupcakes" }

    /// The bound port.
    public var port: Int { server?.port ?? 0 }

    /// Every request received, in order.
    public var requests: [HTTPRequest] { lock.withLock { received } }

    /// How many orders a reqres-like endpoint would have created: 2xx answers given.
    public var created: Int { lock.withLock { createdCount } }
    private var createdCount = 0

    public func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let (answer, number) = lock.withLock { () -> (Answer, Int) in
            received.append(request)
            let answer = script.isEmpty ? fallback : script.removeFirst()
            if (200...299).contains(answer.status) { createdCount += 1 }
            return (answer, received.count)
        }
        let body: [UInt8]
        if let text = answer.body {
            body = Array(text.utf8)
        } else {
            var members = (try? JSONValue.parse(request.body))?.members ?? []
            members.removeAll { $0.key == "id" || $0.key == "createdAt" }
            members.append(.init(key: "id", value: numericIDs ? .integer(Int64(number)) : .string(String(number))))
            members.append(.init(key: "createdAt", value: .string("2026-12-02T10:00:00.123Z")))
            body = Array(JSONValue.object(members).text().utf8)
        }
        let response = HTTPResponse(
            status: answer.status, headers: [("Content-Type", "application/json")] + answer.headers, body: body)
        if answer.delay > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + answer.delay) { respond(response) }
        } else {
            respond(response)
        }
    }
}
