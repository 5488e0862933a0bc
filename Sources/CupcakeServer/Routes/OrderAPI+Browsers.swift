import Foundation

/// What keeps browsers safe around the API: `nosniff` and `no-store` on its answers, and CORS
/// for the web origins the shop names (``AccessPolicy/corsOrigins``) and no others.
extension OrderAPI {
    /// The methods and request headers a page on an allowed origin may use: every method of
    /// the API's routes.
    static let corsMethods = ["GET", "HEAD", "POST", "PATCH", "DELETE", "PUT"].filter { name in
        Route.table.contains { $0.isAPI && $0.allowed.contains(name) }
    }.joined(separator: ", ")
    static let corsRequestHeaders = "Content-Type, x-api-key, Idempotency-Key, Order-Token, If-Match, If-None-Match"
    /// The response headers such a page may read.
    static let corsExposedHeaders = "Location, Request-Id, Retry-After, Idempotent-Replayed, ETag"

    /// `respond`, adding to every answer `X-Content-Type-Options: nosniff` (a browser never
    /// guesses a type from the bytes), to every /api answer `Cache-Control: no-store` (they hold
    /// names and addresses, and change), and for a request from an allowed origin the CORS
    /// headers that let its page read the answer.
    func headersAdded(for request: HTTPRequest, _ respond: @escaping @Sendable (HTTPResponse) -> Void)
        -> @Sendable (HTTPResponse) -> Void
    {
        let isAPI = request.path == "/api" || request.path.hasPrefix("/api/")
        let origin = request.header("origin").flatMap { access.corsOrigins.contains($0) ? $0 : nil }
        return { response in
            var response = response
            response.headers.append(("X-Content-Type-Options", "nosniff"))
            // No /api answer sets a Cache-Control of its own.
            if isAPI { response.headers.append(("Cache-Control", "no-store")) }
            if let origin {
                response.headers.append(("Access-Control-Allow-Origin", origin))
                response.headers.append(("Access-Control-Expose-Headers", Self.corsExposedHeaders))
                response.headers.append(("Vary", "Origin"))
            }
            respond(response)
        }
    }

    /// `OPTIONS`: a CORS preflight from an allowed origin gets 204 and what it may send (no key
    /// needed: browsers send none with a preflight); from any other origin, 403 and no CORS
    /// headers, so the browser never sends the request. Without `Origin`, 204 with `Allow`: the
    /// route's methods (``Route/allowed``).
    func preflight(
        _ request: HTTPRequest, allowed: [String], respond: @escaping @Sendable (HTTPResponse) -> Void
    ) throws(Problem) {
        guard let origin = request.header("origin") else {
            respond(HTTPResponse(status: 204, headers: [("Allow", allowed.joined(separator: ", "))]))
            return
        }
        guard access.corsOrigins.contains(origin) else {
            throw Problem.forbidden("Pages from \(origin) may not call this API (it is not in corsOrigins).")
        }
        let method = request.header("access-control-request-method") ?? ""
        guard Self.corsMethods.components(separatedBy: ", ").contains(method), allowed.contains(method) else {
            throw Problem.forbidden("A page may not send \(method.isEmpty ? "that method" : method) here.")
        }
        respond(
            HTTPResponse(
                status: 204,
                headers: [
                    ("Access-Control-Allow-Methods", Self.corsMethods),
                    ("Access-Control-Allow-Headers", Self.corsRequestHeaders),
                    ("Access-Control-Max-Age", "600"),
                ]))
    }
}
