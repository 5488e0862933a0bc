import CupcakeDomain
import CupcakeJSON
import Foundation

/// The routes anyone may call: the storefront's files, the OpenAPI description, readiness and
/// the quote (health answers in the route table's dispatch).
extension OrderAPI {
    /// The storefront's files: no key (the page asks the person for one when it needs it).
    func storefront(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        guard let asset = Storefront.assets[request.path] else {
            throw Problem.notFound("There is nothing at \(request.path).")
        }
        respond(Storefront.response(for: asset, ifNoneMatch: request.header("if-none-match")))
    }

    func openAPI(respond: @escaping @Sendable (HTTPResponse) -> Void) {
        respond(
            HTTPResponse(
                status: 200, headers: [("Content-Type", "application/yaml"), ("Cache-Control", "max-age=300")],
                body: PackageResources.openapi_yaml))
    }

    /// Readiness, for a load balancer or an orchestrator: the process is up (/healthz) and its
    /// database takes orders now.
    func readiness(respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        if let reason = store.readiness() {
            throw Problem.unavailable("Not ready: \(reason).")
        }
        respond(.json(200, Array(#"{"status":"ready"}"#.utf8)))
    }

    /// POST /api/quote: the order's line items, total and broken rules (``Quote``), 200 even for
    /// an order that breaks rules; 400 or 422 only for a body that is not an order at all.
    func quote(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        try Self.requireJSONBody(request)
        let quote = Quote(try Self.decodeOrder(request.body))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        respond(.json(200, Array(try encoder.encode(quote))))
    }

}
