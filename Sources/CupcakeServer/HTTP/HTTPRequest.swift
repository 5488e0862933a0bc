/// A request as the handlers see it: decoded by libmicrohttpd, nothing parsed by us.
public struct HTTPRequest: Sendable {
    /// The method, upper-case: "POST".
    public var method: String
    /// The path, without the query: "/api/cupcakes/7".
    public var path: String
    /// Query arguments, already unescaped; the last of a repeated name wins.
    public var query: [String: String]
    /// The request headers the order service reads (libmicrohttpd looks each up; the rest are
    /// never copied out). Another handler can ask its ``HTTPServer`` for others.
    public static let headerNames = [
        "content-type", "content-encoding", "idempotency-key", "x-api-key", "host", "origin", "order-token",
        "access-control-request-method", "x-forwarded-for", "if-none-match", "if-match", "last-event-id",
    ]

    /// The request headers the server was asked to copy, with lower-cased names.
    public var headers: [String: String]
    /// The body bytes.
    public var body: [UInt8]
    /// The id this server gave the request (also sent back as `Request-Id`).
    public var requestID: String
    /// Who sent it: the peer's address, or behind a trusted proxy the client's address that
    /// proxy reports in `X-Forwarded-For` (see ``HTTPServer/Limits/trustedProxies``).
    public var clientAddress: String

    /// Creates a request (the server does; tests may too).
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [], requestID: String = "test", clientAddress: String = "127.0.0.1"
    ) {
        self.clientAddress = clientAddress
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.requestID = requestID
    }

    /// A header's value by case-insensitive name.
    public func header(_ name: String) -> String? {
        // The server asks with lower-case names: no new string for those.
        name.utf8.contains { $0 >= 0x41 && $0 <= 0x5A } ? headers[name.lowercased()] : headers[name]
    }
}
