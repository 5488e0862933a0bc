/// An answer: status, headers and body bytes.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Headers besides `Request-Id`, which the server adds.
    public var headers: [(name: String, value: String)]
    private var storedBody: [UInt8]
    private var render: (@Sendable () -> [UInt8])?
    /// A body sent from a file instead of `body`.
    public private(set) var file: ResponseFile?
    /// A body written while it is sent, instead of `body`.
    public private(set) var stream: ResponseStream?

    /// The body (rendered now if it was deferred).
    public var body: [UInt8] { render?() ?? storedBody }

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        storedBody = body
        render = nil
    }

    /// A response whose body is rendered only when it is sent, on the thread that sends it:
    /// answers completed by the group-commit writer are then rendered by the HTTP workers, and
    /// the writer stays free for the next commit.
    public init(status: Int, headers: [(name: String, value: String)] = [], render: @escaping @Sendable () -> [UInt8]) {
        self.status = status
        self.headers = headers
        storedBody = []
        self.render = render
    }

    /// A response whose body is the whole of `file`.
    public init(status: Int, headers: [(name: String, value: String)] = [], file: ResponseFile) {
        self.status = status
        self.headers = headers
        storedBody = []
        render = nil
        self.file = file
    }

    /// A response whose body is `stream`, sent as it is written (chunked).
    public init(status: Int, headers: [(name: String, value: String)] = [], stream: ResponseStream) {
        self.status = status
        self.headers = headers
        storedBody = []
        render = nil
        self.stream = stream
    }

    /// A JSON answer.
    public static func json(_ status: Int, _ body: [UInt8], headers: [(name: String, value: String)] = [])
        -> HTTPResponse
    {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// The value of a header, by case-insensitive (ASCII) name.
    public func header(_ name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    /// Header names compared byte by byte, ASCII letters without case (no string is made).
    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8) { x, y in
            x == y || (x ^ 0x20 == y && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z"))
        }
    }
}

/// Something that answers requests. `respond` is called exactly once, from any thread, now or
/// later (a POST answers after its group commit).
public protocol HTTPHandler: Sendable {
    /// Handles a request.
    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void)
}
