/// An answer: status, headers and body bytes.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Headers besides `Request-Id`, which the server adds.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON answer.
    public static func json(_ status: Int, _ body: [UInt8], headers: [(name: String, value: String)] = [])
        -> HTTPResponse
    {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// The value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Something that answers requests. `respond` is called exactly once, from any thread, now or
/// later (a POST answers after its group commit).
public protocol HTTPHandler: Sendable {
    /// Handles a request.
    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void)
}
