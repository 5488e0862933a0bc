import CupcakeDomain
import CupcakeJSON
import FoundationEssentials
import Synchronization

/// Reads and changes the order history at the collection the configured order endpoint names
/// (`…/api/cupcakes`), with the same transport, retries and credentials as placing an order.
public final class OrdersClient: Sendable {
    private let transport: Transport

    /// Creates a client.
    public init(configuration: CheckoutConfiguration) {
        transport = Transport(configuration: configuration, staff: true)
    }

    /// The list filters and window, as query parameters.
    public struct ListRequest: Sendable {
        /// `name_prefix`.
        public var namePrefix: String?
        /// `type` (an index or a name).
        public var type: String?
        /// `favorite=true` when set.
        public var favoritesOnly = false
        /// `status`: one or several statuses, comma-separated.
        public var statuses: String?
        /// `sort`.
        public var sort: String?
        /// `page`.
        public var page: Int?
        /// `per_page`.
        public var perPage: Int?

        /// An unfiltered first page.
        public init() {}
    }

    /// One page of orders.
    public func list(_ listing: ListRequest, events: @Sendable (TransportEvent) -> Void = { _ in })
        async throws(CheckoutError)
        -> OrderListPage
    {
        var components = URLComponents(url: transport.configuration.endpoint, resolvingAgainstBaseURL: false)
        var items: [URLQueryItem] = []
        if let prefix = listing.namePrefix { items.append(URLQueryItem(name: "name_prefix", value: prefix)) }
        if let type = listing.type { items.append(URLQueryItem(name: "type", value: type)) }
        if listing.favoritesOnly { items.append(URLQueryItem(name: "favorite", value: "true")) }
        if let statuses = listing.statuses { items.append(URLQueryItem(name: "status", value: statuses)) }
        if let sort = listing.sort { items.append(URLQueryItem(name: "sort", value: sort)) }
        if let page = listing.page { items.append(URLQueryItem(name: "page", value: String(page))) }
        if let perPage = listing.perPage { items.append(URLQueryItem(name: "per_page", value: String(perPage))) }
        components?.queryItems = items.isEmpty ? nil : items
        // `+` is a space to some servers: encode it, and the other reserved characters, strictly.
        let query = components?.percentEncodedQuery.map {
            $0.split(separator: "+", omittingEmptySubsequences: false).joined(separator: "%2B")
        }
        components?.percentEncodedQuery = query
        guard let url = components?.url else {
            throw CheckoutError(
                .configuration, "Cannot build a list URL from \(Transport.display(transport.configuration.endpoint)).")
        }
        let answer = try await transport.send(
            transport.request("GET", url), passing: [403], limit: Transport.listLimit, events: events)
        if answer.status == 403 {
            throw CheckoutError(
                .forbidden,
                "The endpoint lists orders only with the staff key (403): "
                    + (Transport.serverMessage(answer.data) ?? "forbidden"))
        }
        return try OrderListPage(json: answer.data)
    }

    /// One order by id; `token` is its receipt token, which the app key needs.
    public func show(id: String, token: String? = nil, events: @Sendable (TransportEvent) -> Void = { _ in })
        async throws(CheckoutError) -> ListedOrder
    {
        let answer = try await transport.send(
            request("GET", try url(id), token: token), passing: [404], events: events)
        return try single(answer, id: id)
    }

    /// A request for one order, with its receipt token when there is one.
    private func request(_ method: String, _ url: URL, body: Data? = nil, token: String?) -> OutgoingRequest {
        var request = transport.request(method, url, body: body)
        if let token { request.setHeader("Order-Token", token) }
        return request
    }

    /// Marks or unmarks an order as a favourite.
    public func setFavorite(
        id: String, _ isFavorite: Bool, token: String? = nil, events: @Sendable (TransportEvent) -> Void = { _ in }
    ) async throws(CheckoutError) -> ListedOrder {
        let body = Data(#"{"isFavorite":\#(isFavorite)}"#.utf8)
        let answer = try await transport.send(
            request("PATCH", try url(id), body: body, token: token), passing: [404], events: events)
        return try single(answer, id: id)
    }

    /// Cancels an order (it is kept, cancelled); `reason` is needed to cancel one the kitchen
    /// has started. Cancelling a cancelled order again is done (204), so a retry after a lost
    /// answer is too.
    public func cancel(
        id: String, reason: String? = nil, token: String? = nil, events: @Sendable (TransportEvent) -> Void = { _ in }
    ) async throws(CheckoutError) {
        var url = try url(id)
        if let reason, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = [URLQueryItem(name: "reason", value: reason)]
            components.percentEncodedQuery = components.percentEncodedQuery.map {
                $0.split(separator: "+", omittingEmptySubsequences: false).joined(separator: "%2B")
            }
            url = components.url ?? url
        }
        let answer = try await transport.send(
            request("DELETE", url, token: token), passing: [404, 409, 412, 422], events: events)
        switch answer.status {
        case 404: throw notFound(id)
        case 409, 412, 422: throw refusal(answer, id: id)
        default: return
        }
    }

    /// Moves an order to `target`, or one step on when it is nil: reads the order, then asks
    /// for the move with `If-Match` on the version read, so a move made meanwhile by someone
    /// else is never overwritten. A retry whose first attempt did move it (its answer lost)
    /// finds the order already there and counts as done.
    ///
    /// - Returns: the order before and after.
    public func advance(
        id: String, to target: String? = nil, reason: String? = nil, token: String? = nil,
        events: @Sendable (TransportEvent) -> Void = { _ in }
    ) async throws(CheckoutError) -> (before: ListedOrder, after: ListedOrder) {
        let before = try await show(id: id, token: token, events: events)
        guard let current = before.status.flatMap({ OrderStatus(wireName: $0) }), let version = before.version else {
            throw CheckoutError(.protocolError, "The endpoint's order \(id) has no status or version to move from.")
        }
        guard let next = target ?? current.next?.wireName else {
            throw CheckoutError(
                .refused, "Order \(id) is \(current.title.lowercased()); nothing follows (give --to to say where).")
        }
        var body: [JSONValue.Member] = [.init(key: "status", value: .string(next))]
        if let reason { body.append(.init(key: "reason", value: .string(reason))) }
        var request = request("PATCH", try url(id), body: Data(JSONValue.object(body).text().utf8), token: token)
        request.setHeader("If-Match", "\"v\(version)\"")
        let answer = try await transport.send(request, passing: [404, 409, 412, 422], events: events)
        switch answer.status {
        case 404:
            throw notFound(id)
        case 412:
            // Changed since it was read: by this very move, when an earlier attempt's answer
            // was lost; else by someone else, and nothing was done.
            let now = try await show(id: id, token: token, events: events)
            if answer.attempt > 1, now.status == next, now.version == version + 1 { return (before, now) }
            throw refusal(answer, id: id)
        case 409, 422:
            throw refusal(answer, id: id)
        default:
            return (before, try single(answer, id: id))
        }
    }

    /// Follows one order's event stream (`GET …/{id}/events`) from after `lastEventID` (from its
    /// first event without one), handing each message to `onMessage` until the server ends the
    /// stream (true), `onMessage` returns false (true), or the stream breaks (an error to
    /// resume after). A refusal (404, 401) is thrown as it is.
    public func follow(
        id: String, token: String? = nil, lastEventID: String? = nil, idleSeconds: Int = 30,
        onMessage: @escaping @Sendable (EventStreamParser.Message) -> Bool
    ) async throws(CheckoutError) {
        var request = request("GET", try url(id).appendingPathComponent("events", isDirectory: false), token: token)
        request.setHeader("Accept", "text/event-stream")
        if let lastEventID { request.setHeader("Last-Event-ID", lastEventID) }
        let parser = Mutex(EventStreamParser())
        let result = await transport.stream(request, idleSeconds: idleSeconds) { bytes in
            let messages = parser.withLock { $0.feed(bytes) }
            return messages.allSatisfy(onMessage)
        }
        switch result {
        case .failure(let error): throw error
        case .success(let reply) where reply.status == 404: throw notFound(id)
        case .success(let reply) where !(200...299).contains(reply.status):
            throw Transport.failure(status: reply.status, data: reply.body)
        case .success: return
        }
    }

    /// A refused change as an error: the server's words, and the moves it allows.
    private func refusal(_ answer: Transport.Answer, id: String) -> CheckoutError {
        let message = Transport.serverMessage(answer.data) ?? "HTTP \(answer.status)"
        switch answer.status {
        case 412:
            return CheckoutError(.changed, "Order \(id) changed meanwhile, so nothing was done (412): \(message)")
        case 422:
            return CheckoutError(.rejected, "The endpoint rejected the change (422): \(message)")
        default:
            return CheckoutError(.refused, "The endpoint refused (409): \(message)")
        }
    }

    private func url(_ id: String) throws(CheckoutError) -> URL {
        guard !id.isEmpty else {
            throw CheckoutError(.notFound, "An order id must not be empty.")
        }
        return transport.configuration.endpoint.appendingPathComponent(Self.pathSegment(id), isDirectory: false)
    }

    /// `id` as one path segment: every byte but RFC 3986's unreserved characters and the
    /// sub-delimiters, `:` and `@` percent-encoded (so `/`, `?`, `#`, `%` and spaces are).
    static func pathSegment(_ id: String) -> String {
        let kept = "!$&'()*+,-.:=@_~".utf8
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                bytes.append(byte)
            case _ where kept.contains(byte): bytes.append(byte)
            default: bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func single(_ answer: Transport.Answer, id: String) throws(CheckoutError) -> ListedOrder {
        if answer.status == 404 { throw notFound(id) }
        guard let object = try? JSONValue.parse(answer.data), object.members != nil else {
            throw CheckoutError(
                .protocolError, "The endpoint's answer is not a JSON object: \(Confirmation.preview(answer.data)).")
        }
        return ListedOrder(json: object["data"].flatMap { $0.members != nil ? $0 : nil } ?? object)
    }

    private func notFound(_ id: String) -> CheckoutError {
        CheckoutError(
            .notFound, "There is no order with id '\(id)' at \(Transport.display(transport.configuration.endpoint)).")
    }
}
