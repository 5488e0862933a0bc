import CupcakeJSON
import FoundationEssentials

/// The staff's webhook endpoints and the events feed, beside the order collection the
/// configured endpoint names (`…/api/cupcakes` → `…/api/webhook-endpoints`, `…/api/events`),
/// with the same transport, retries and key. Answers come back as parsed JSON.
public final class WebhooksClient: Sendable {
    private let transport: Transport

    /// Creates a client.
    public init(configuration: CheckoutConfiguration) {
        transport = Transport(configuration: configuration, staff: true)
    }

    /// Subscribes `url` to `eventTypes` (every type when empty); the answer holds the secret.
    public func add(url: String, eventTypes: [String]) async throws(CheckoutError) -> JSONValue {
        var members: [JSONValue.Member] = [.init(key: "url", value: .string(url))]
        if !eventTypes.isEmpty {
            members.append(.init(key: "eventTypes", value: .array(eventTypes.map { .string($0) })))
        }
        let body = Data(JSONValue.object(members).text().utf8)
        return try await object(
            transport.request("POST", try sibling("webhook-endpoints"), body: body), what: "the new endpoint")
    }

    /// Every endpoint.
    public func list() async throws(CheckoutError) -> JSONValue {
        try await object(transport.request("GET", try sibling("webhook-endpoints")), what: "the endpoints")
    }

    /// Removes an endpoint with its deliveries.
    public func remove(id: String) async throws(CheckoutError) {
        let url = try sibling("webhook-endpoints").appendingPathComponent(
            OrdersClient.pathSegment(id), isDirectory: false)
        let answer = try await transport.send(transport.request("DELETE", url), passing: [404], events: { _ in })
        if answer.status == 404 { throw noEndpoint(id) }
    }

    /// An endpoint's latest attempts, newest first.
    public func deliveries(id: String, limit: Int) async throws(CheckoutError) -> JSONValue {
        var url = try sibling("webhook-endpoints")
            .appendingPathComponent(OrdersClient.pathSegment(id), isDirectory: false)
            .appendingPathComponent("deliveries", isDirectory: false)
        url = try query(url, [("limit", String(limit))])
        return try await object(transport.request("GET", url), what: "the deliveries", notFound: noEndpoint(id))
    }

    /// A page of the events feed after `after` (from the start when nil).
    public func events(after: String?, limit: Int) async throws(CheckoutError) -> JSONValue {
        var items = [("limit", String(limit))]
        if let after { items.append(("after", after)) }
        let url = try query(try sibling("events"), items)
        return try await object(transport.request("GET", url), what: "the events", limit: Transport.listLimit)
    }

    /// `…/api/<name>` beside the order collection.
    private func sibling(_ name: String) throws(CheckoutError) -> URL {
        let endpoint = transport.configuration.endpoint
        guard endpoint.lastPathComponent == "cupcakes" else {
            throw CheckoutError(
                .configuration,
                "The endpoint \(Transport.display(endpoint)) is not a cupcake serve collection (…/api/cupcakes), "
                    + "so it has no \(name).")
        }
        return endpoint.deletingLastPathComponent().appendingPathComponent(name, isDirectory: false)
    }

    private func query(_ url: URL, _ items: [(String, String)]) throws(CheckoutError) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.queryItems = items.map { URLQueryItem(name: $0.0, value: $0.1) }
        let encoded = components?.percentEncodedQuery.map {
            $0.split(separator: "+", omittingEmptySubsequences: false).joined(separator: "%2B")
        }
        components?.percentEncodedQuery = encoded
        guard let built = components?.url else {
            throw CheckoutError(.configuration, "Cannot build a URL from \(Transport.display(url)).")
        }
        return built
    }

    private func object(
        _ request: OutgoingRequest, what: String, limit: Int = Transport.orderLimit, notFound: CheckoutError? = nil
    ) async throws(CheckoutError) -> JSONValue {
        let answer = try await transport.send(
            request, passing: notFound == nil ? [] : [404], limit: limit, events: { _ in })
        if answer.status == 404, let notFound { throw notFound }
        guard let object = try? JSONValue.parse(answer.data), object.members != nil else {
            throw CheckoutError(
                .protocolError,
                "The endpoint's answer for \(what) is not a JSON object: \(Confirmation.preview(answer.data)).")
        }
        return object
    }

    private func noEndpoint(_ id: String) -> CheckoutError {
        CheckoutError(.notFound, "There is no webhook endpoint with id '\(id)'.")
    }
}
