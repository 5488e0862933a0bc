import CupcakeCheckout
import CupcakeDomain
import CupcakeJSON
import CupcakeStorage
import Foundation

/// The staff's webhook routes: endpoints (`/api/webhook-endpoints`, their secret's rotation and
/// their deliveries), redelivery of an event, and the events feed (`GET /api/events`).
extension OrderAPI {
    /// The most attempts or events one answer lists.
    static let maximumFeedLimit = 500
    /// How long a rotated secret keeps signing beside the new one.
    static let rotationGraceMilliseconds: Int64 = 24 * 3_600_000

    // MARK: - Endpoints

    func createWebhookEndpoint(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        try Self.requireJSONBody(request)
        let (url, types) = try decodeEndpoint(request.body)
        let endpoint = try store.createWebhookEndpoint(
            url: url, eventTypes: types, secret: WebhookSignature.newSecret(), nowMilliseconds: now())
        respond(
            .json(
                201, Self.endpointJSON(endpoint, withSecret: true),
                headers: [("Location", "/api/webhook-endpoints/\(endpoint.id)")]))
    }

    func listWebhookEndpoints(respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("data")
        writer.beginArray()
        for endpoint in try store.webhookEndpoints() { Self.write(endpoint, withSecret: false, into: &writer) }
        writer.endArray()
        writer.endObject()
        respond(.json(200, writer.bytes))
    }

    func webhookEndpoint(
        _ request: HTTPRequest, idText: String, respond: @escaping @Sendable (HTTPResponse) -> Void
    ) throws {
        let id = try Self.endpointID(idText)
        switch request.method {
        case "DELETE":
            guard try store.deleteWebhookEndpoint(id: id) else { throw Self.noEndpoint(idText) }
            respond(HTTPResponse(status: 204))
        case "PATCH":
            try Self.requireJSONBody(request)
            guard let parsed = try? JSONValue.parse(request.body), let members = parsed.members else {
                throw Problem.badRequest("The body must be a JSON object such as {\"enabled\": true}.")
            }
            guard members.count == 1, case .bool(let enabled)? = parsed["enabled"] else {
                throw Problem.unprocessable(
                    "The change is not valid.", errors: [(field: "enabled", rule: "is required, true or false, alone")])
            }
            guard
                let endpoint = try store.changeWebhookEndpoint(
                    id: id, .enabled(enabled, reason: enabled ? nil : "disabled by the staff"))
            else { throw Self.noEndpoint(idText) }
            respond(.json(200, Self.endpointJSON(endpoint, withSecret: false)))
        default:
            guard let endpoint = try store.webhookEndpoints().first(where: { $0.id == id }) else {
                throw Self.noEndpoint(idText)
            }
            respond(.json(200, Self.endpointJSON(endpoint, withSecret: false)))
        }
    }

    func rotateWebhookSecret(idText: String, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let id = try Self.endpointID(idText)
        guard
            let endpoint = try store.changeWebhookEndpoint(
                id: id,
                .rotated(
                    secret: WebhookSignature.newSecret(),
                    previousUntilMilliseconds: now() + Self.rotationGraceMilliseconds))
        else { throw Self.noEndpoint(idText) }
        respond(.json(200, Self.endpointJSON(endpoint, withSecret: true)))
    }

    func webhookDeliveries(
        _ request: HTTPRequest, idText: String, respond: @escaping @Sendable (HTTPResponse) -> Void
    ) throws {
        let id = try Self.endpointID(idText)
        let limit = try Self.feedLimit(request, known: ["limit"])
        guard try store.webhookEndpoints().contains(where: { $0.id == id }) else { throw Self.noEndpoint(idText) }
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("data")
        writer.beginArray()
        for attempt in try store.webhookAttempts(endpointID: id, limit: limit) {
            writer.beginObject()
            writer.key("eventId")
            writer.string(WebhookEvent.id(attempt.eventID))
            writer.key("at")
            writer.timestamp(milliseconds: attempt.atMilliseconds)
            writer.key("status")
            writer.integer(attempt.status)
            writer.key("durationMs")
            writer.integer(attempt.durationMilliseconds)
            writer.key("error")
            if let error = attempt.error { writer.string(error) } else { writer.null() }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        respond(.json(200, writer.bytes))
    }

    func redeliver(idText: String, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        guard let eventID = WebhookEvent.eventID(idText) else {
            throw Problem.notFound("There is no event with id '\(idText)'.")
        }
        guard let event = try store.webhookEvent(id: eventID) else {
            throw Problem.notFound("There is no event with id '\(idText)'.")
        }
        // Every endpoint that received it, or was sent it: one subscribed to its type, made
        // before it, whose reading of the log has passed it.
        let type = WebhookEvent.type(of: event.change.status)
        let endpoints = try store.webhookEndpoints().filter {
            $0.receives(type, atMilliseconds: event.change.atMilliseconds) && $0.position >= event.position
        }
        let count = try store.redeliverWebhookEvent(
            eventID: eventID, orderID: event.orderID, type: type, endpointIDs: endpoints.map(\.id),
            nowMilliseconds: now())
        guard count > 0 else {
            throw Problem.notFound("Event '\(idText)' has no webhook deliveries to make again.")
        }
        webhooks?.nudge()
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("eventId")
        writer.string(WebhookEvent.id(eventID))
        writer.key("deliveries")
        writer.integer(count)
        writer.endObject()
        respond(.json(202, writer.bytes))
    }

    // MARK: - The events feed

    /// `GET /api/events?after=<position>&limit=`: the log's events after a position, oldest
    /// first, each as a webhook carries it (with its `id` and `position`); `next_after` is where
    /// the next page starts (the last position, or the one given when nothing is new).
    func eventFeed(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let limit = try Self.feedLimit(request, known: ["limit", "after"])
        var after = EventPosition.start
        if let text = request.query["after"], !text.isEmpty {
            guard let position = EventPosition(text: text) else {
                throw Problem.badRequest(
                    "'after' must be a position this server gave (\"position\" or \"next_after\").")
            }
            after = position
        }
        let events = try store.events(after: after, orderID: nil, limit: limit)
        var orders: [Int64: StoredOrder?] = [:]
        var writer = JSONWriter(capacity: 256 + events.count * 600)
        writer.beginObject()
        writer.key("data")
        writer.beginArray()
        for event in events {
            if orders[event.orderID] == nil {
                orders[event.orderID] = .some(try store.order(id: event.orderID, history: true))
            }
            WebhookEvent.write(event, order: orders[event.orderID] ?? nil, into: &writer, feed: true)
        }
        writer.endArray()
        writer.key("next_after")
        writer.string((events.last?.position ?? after).description)
        writer.endObject()
        respond(.json(200, writer.bytes))
    }

    // MARK: - Reading and writing

    private static func feedLimit(_ request: HTTPRequest, known: Set<String>) throws(Problem) -> Int {
        if let unknown = request.query.keys.sorted().first(where: { !known.contains($0) }) {
            throw Problem.badRequest(
                "Unknown parameter '\(unknown)'; this takes \(known.sorted().joined(separator: ", ")).")
        }
        guard let text = request.query["limit"] else { return 100 }
        guard let limit = Int(text), (1...maximumFeedLimit).contains(limit) else {
            throw Problem.badRequest("'limit' must be a whole number from 1 to \(maximumFeedLimit).")
        }
        return limit
    }

    private static func endpointID(_ text: String) throws(Problem) -> Int64 {
        guard let id = canonicalID(text) else { throw noEndpoint(text) }
        return id
    }

    private static func noEndpoint(_ text: String) -> Problem {
        Problem.notFound("There is no webhook endpoint with id '\(text)'.")
    }

    /// `{"url": "https://…", "eventTypes": ["order.placed", …]}`; eventTypes may be left out
    /// (every type).
    private func decodeEndpoint(_ body: [UInt8]) throws(Problem) -> (String, [String]) {
        let example = "send {\"url\": \"https://kitchen.example/hooks\", \"eventTypes\": [\"order.placed\"]}"
        guard let parsed = try? JSONValue.parse(body), let members = parsed.members else {
            throw Problem.badRequest("The body must be a JSON object; \(example).")
        }
        var errors: [(field: String, rule: String)] = []
        for key in members.map(\.key).sorted() where key != "url" && key != "eventTypes" {
            errors.append((field: key, rule: "is not a field of an endpoint (url, eventTypes)"))
        }
        var url = ""
        if case .string(let text)? = parsed["url"] {
            url = text
            if let rule = urlRefusal(text) { errors.append((field: "url", rule: rule)) }
        } else {
            errors.append((field: "url", rule: "is required: an http or https URL"))
        }
        var types: [String] = []
        switch parsed["eventTypes"] {
        case nil, .null?: break
        case .array(let list)?:
            for element in list {
                guard let type = element.string, WebhookEvent.types.contains(type) else {
                    errors.append(
                        (field: "eventTypes", rule: "must hold only \(WebhookEvent.types.joined(separator: ", "))"))
                    break
                }
                if !types.contains(type) { types.append(type) }
            }
        default:
            errors.append((field: "eventTypes", rule: "must be an array of event types"))
        }
        guard errors.isEmpty else { throw Problem.unprocessable("The endpoint is not valid.", errors: errors) }
        return (url, types)
    }

    /// Why a receiver URL is refused, or nil: http or https, a host, no user or password, at
    /// most 2,000 characters with no spaces or controls; and a literal address must be one
    /// webhooks may reach (a name is checked when it is resolved, at every delivery).
    private func urlRefusal(_ text: String) -> String? {
        guard text.utf8.count <= 2000 else { return "must be at most 2000 characters" }
        guard
            !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || TextSafety.mustEscape($0) })
        else { return "must not hold spaces or control characters" }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return "must be an http or https URL with a host" }
        guard components.user == nil, components.password == nil else { return "must not carry a user or password" }
        if !webhookSettings.allowPrivateAddresses, let refusal = AddressRule.refusal(literal: host) {
            return "names \(refusal), which webhooks may not reach (see webhookAllowPrivateAddresses)"
        }
        if !webhookSettings.allowPrivateAddresses,
            host.lowercased() == "localhost" || host.lowercased().hasSuffix(".localhost")
        {
            return "names a loopback address, which webhooks may not reach (see webhookAllowPrivateAddresses)"
        }
        return nil
    }

    static func endpointJSON(_ endpoint: WebhookEndpoint, withSecret: Bool) -> [UInt8] {
        var writer = JSONWriter()
        write(endpoint, withSecret: withSecret, into: &writer)
        return writer.bytes
    }

    /// An endpoint as the API shows it; its secret only when just made or rotated.
    static func write(_ endpoint: WebhookEndpoint, withSecret: Bool, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("id")
        writer.string(String(endpoint.id))
        writer.key("url")
        writer.string(endpoint.url)
        writer.key("eventTypes")
        writer.beginArray()
        for type in endpoint.eventTypes.isEmpty ? WebhookEvent.types : endpoint.eventTypes { writer.string(type) }
        writer.endArray()
        writer.key("enabled")
        writer.bool(endpoint.enabled)
        writer.key("disabledReason")
        if let reason = endpoint.disabledReason { writer.string(reason) } else { writer.null() }
        writer.key("failingSince")
        if let since = endpoint.failingSinceMilliseconds {
            writer.timestamp(milliseconds: since)
        } else {
            writer.null()
        }
        writer.key("createdAt")
        writer.timestamp(milliseconds: endpoint.createdAtMilliseconds)
        if withSecret {
            writer.key("secret")
            writer.string(endpoint.secret)
            if let until = endpoint.previousSecretUntilMilliseconds, endpoint.previousSecret != nil {
                writer.key("previousSecretValidUntil")
                writer.timestamp(milliseconds: until)
            }
        }
        writer.endObject()
    }
}
