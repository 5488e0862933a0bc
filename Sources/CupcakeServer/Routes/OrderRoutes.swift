import CupcakeDomain
import CupcakeJSON
import CupcakeStorage
import Foundation

/// The orders' routes: `POST` and `GET /api/cupcakes`, and `GET`, `PATCH` and `DELETE
/// /api/cupcakes/{id}`.
extension OrderAPI {
    /// An order's route: its id, then who may reach it, then the method's work.
    func order(
        _ request: HTTPRequest, idText: String, access: Access, respond: @escaping @Sendable (HTTPResponse) -> Void
    ) throws {
        let notFound = Problem.notFound("There is no order with id '\(idText)'.")
        guard let id = Self.canonicalID(idText) else { throw notFound }
        if access == .app {
            // One's own order only, by its receipt token; any other answer would tell which ids
            // exist, so a missing or wrong token is the same 404 as a missing order.
            guard let stored = try store.order(id: id),
                ReceiptToken.matches(request.header("order-token"), stored: stored.receiptHash)
            else { throw notFound }
        }
        let actor: OrderActor = access.isStaff ? .staff : .customer
        switch request.method {
        case "PATCH":
            try Self.requireJSONBody(request)
            let (favorite, move) = try Self.decodeChange(request.body, actor: actor)
            let change = OrderChange(
                favorite: favorite, move: move, expectedVersions: try Self.ifMatch(request), atMilliseconds: now())
            let outcome = try store.change(id: id, change)
            countMove(outcome)
            let stored = try Self.changed(outcome, actor: actor, notFound: notFound)
            respond(.json(200, stored.dataJSON, headers: [("ETag", stored.entityTag)]))
        case "DELETE":
            // Cancelling: the order stays, cancelled. Cancelling a cancelled order again is done.
            try Self.checkReason(request.query["reason"])
            let move = StatusMove(to: .cancelled, by: actor, reason: request.query["reason"])
            let change = OrderChange(move: move, expectedVersions: try Self.ifMatch(request), atMilliseconds: now())
            let outcome = try store.change(id: id, change)
            countMove(outcome)
            if case .refused(.final(.cancelled), let stored) = outcome {
                respond(HTTPResponse(status: 204, headers: [("ETag", stored.entityTag)]))
                return
            }
            let stored = try Self.changed(outcome, actor: actor, notFound: notFound)
            respond(HTTPResponse(status: 204, headers: [("ETag", stored.entityTag)]))
        default:
            guard let stored = try store.order(id: id, history: true) else { throw notFound }
            if let tags = request.header("if-none-match"),
                Self.entityTags(tags).contains(stored.entityTag) || tags == "*"
            {
                respond(HTTPResponse(status: 304, headers: [("ETag", stored.entityTag)]))
                return
            }
            respond(.json(200, stored.dataJSON, headers: [("ETag", stored.entityTag)]))
        }
    }

    /// Counts a status move in /metrics (how long the order stayed in the status it left), and
    /// has the event streams read the log at once.
    func countMove(_ outcome: OrderChangeOutcome) {
        if case .changed = outcome { events?.nudge() }
        guard case .changed(let stored) = outcome, let history = stored.history, history.count >= 2,
            history[history.count - 1].status == stored.status,
            history[history.count - 1].atMilliseconds == stored.statusChangedAtMilliseconds,
            history[history.count - 2].status != stored.status
        else { return }
        let left = history[history.count - 2]
        metrics.left(
            status: left.status.wireName,
            after: Double(stored.statusChangedAtMilliseconds - left.atMilliseconds) / 1000)
    }

    /// The order a change left, or the problem it met: 404, 412 (changed meanwhile), 409 (a
    /// move the model does not allow from the status it found, with the moves it does allow) or
    /// 422 (a bad reason).
    static func changed(_ outcome: OrderChangeOutcome, actor: OrderActor, notFound: Problem) throws(Problem)
        -> StoredOrder
    {
        switch outcome {
        case .changed(let stored), .unchanged(let stored):
            return stored
        case .notFound:
            throw notFound
        case .versionMismatch(let stored):
            var problem = Problem.preconditionFailed(
                "The order changed since you read it (it is now \(stored.entityTag), \(stored.status.wireName)); "
                    + "read it again and decide.")
            problem.headers = [("ETag", stored.entityTag)]
            problem.extensions = [.init(key: "currentStatus", value: .string(stored.status.wireName))]
            throw problem
        case .refused(let refusal, let stored):
            guard refusal.isConflict else {
                throw Problem.unprocessable(
                    "The change is not valid.", errors: [(field: "reason", rule: refusal.description)])
            }
            let allowed = StatusMove.allowedTargets(from: stored.status, by: actor)
            var problem = Problem.conflict(
                "Cannot do that: \(refusal.description)."
                    + (allowed.isEmpty ? "" : " Allowed next: \(allowed.map(\.wireName).joined(separator: ", ")).")
            )
            problem.headers = [("ETag", stored.entityTag)]
            problem.extensions = [
                .init(key: "code", value: .string(refusal.code)),
                .init(key: "currentStatus", value: .string(stored.status.wireName)),
                .init(key: "allowed", value: .array(allowed.map { .string($0.wireName) })),
            ]
            throw problem
        }
    }

    /// The versions an `If-Match` accepts: nil without one or for `*` (any), else the versions of
    /// the strong tags this server makes (`"v3"`); weak or foreign tags match nothing (RFC 9110
    /// §13.1.1 compares strongly).
    static func ifMatch(_ request: HTTPRequest) -> Set<Int64>? {
        guard let value = request.header("if-match") else { return nil }
        let tags = entityTags(value)
        if tags.contains("*") { return nil }
        return Set(
            tags.compactMap { tag -> Int64? in
                guard tag.hasPrefix("\"v"), tag.hasSuffix("\""), tag.utf8.count > 3 else { return nil }
                let digits = tag.dropFirst(2).dropLast()
                guard digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                return Int64(digits)
            })
    }

    /// The members of an entity-tag list, without the whitespace around them.
    static func entityTags(_ value: String) -> [String] {
        value.split(separator: ",").map { String($0.trimmingOptionalWhitespace) }
    }

    // MARK: - POST /api/cupcakes

    func create(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        try Self.requireJSONBody(request)
        let order = try Self.decodeValidOrder(request.body)
        let key = try Self.idempotencyKey(request)
        let token = ReceiptToken()
        let newOrder = NewOrder(
            order: order, costCents: order.costCents, createdAtMilliseconds: now(), receiptHash: token.hash)
        guard let key else {
            committer.submit(newOrder) { [log, metrics] result in
                respond(Self.created(result, receipt: token, requestID: request.requestID, log: log, metrics: metrics))
            }
            return
        }
        let fingerprint = order.wireJSON
        switch try store.claimIdempotencyKey(key, fingerprint: fingerprint, nowMilliseconds: now()) {
        case .inFlight:
            throw Problem.conflict("A request with this Idempotency-Key is still in progress; retry later.")
        case .used(let record):
            guard record.fingerprint == fingerprint else {
                throw Problem.unprocessable(
                    "This Idempotency-Key was already used with a different order; use a new key for a new order.")
            }
            metrics.replayed()
            respond(
                HTTPResponse(
                    status: record.status,
                    headers: [
                        ("Content-Type", "application/json"),
                        ("Location", "\(Self.collectionPath)/\(record.orderID)"),
                        ("Idempotent-Replayed", "true"),
                    ], body: record.body))
        case .claimed:
            let claim = IdempotencyClaim(key: key, fingerprint: fingerprint, status: 201) { $0.replayJSON }
            var keyed = newOrder
            keyed.idempotency = claim
            committer.submit(keyed) { [store, log, metrics] result in
                store.releaseIdempotencyKey(key, committed: (try? result.get()) != nil)
                respond(Self.created(result, receipt: token, requestID: request.requestID, log: log, metrics: metrics))
            }
        }
    }

    static func created(
        _ result: Result<StoredOrder, StorageError>, receipt: ReceiptToken, requestID: String, log: AccessLog,
        metrics: Metrics
    ) -> HTTPResponse {
        if case .failure(let error) = result { metrics.storageError(error.code.description) }
        switch result {
        case .success(let stored):
            metrics.orderCreated()
            return HTTPResponse(
                status: 201,
                headers: [("Content-Type", "application/json"), ("Location", "\(collectionPath)/\(stored.id)")],
                render: { stored.json(receiptToken: receipt.text) })
        case .failure(let error) where error.code == .unavailable:
            return Problem.unavailable("The server is shutting down; retry shortly.").response
        case .failure(let error) where error.code == .temporary || error.code == .conflict:
            // Conflict: another instance took over this Idempotency-Key's claim after it expired;
            // nothing was stored here, and a retry with the key gets that instance's answer.
            log.notice("error: request \(requestID): \(error)")
            return Problem.storageUnavailable().response
        case .failure(let error):
            log.notice("error: request \(requestID): \(error)")
            return Problem.internalError(requestID: requestID).response
        }
    }

    /// Decodes, normalizes and validates an order body: 400 when it is not a JSON object, 422
    /// naming every bad field otherwise.
    static func decodeValidOrder(_ body: [UInt8]) throws(Problem) -> Order {
        let order = try decodeOrder(body)
        let issues = order.validate()
        guard issues.isEmpty else {
            throw Problem.unprocessable(
                "The order is not valid.", errors: issues.map { (field: $0.field, rule: $0.rule) })
        }
        return order
    }

    /// The order in a body, valid or not: 400 for a body that is not JSON or not an object, 422
    /// naming each key that is missing or of the wrong type.
    static func decodeOrder(_ body: [UInt8]) throws(Problem) -> Order {
        let order: Order
        do {
            order = try Order.decode(json: body)
        } catch {
            if error.isMalformed {
                throw Problem.badRequest("The body is not a JSON object: \(error)")
            }
            guard case .keys(let problems) = error.kind else {
                throw Problem.badRequest("The body is not an order: \(error)")
            }
            throw Problem.unprocessable(
                "The order is not valid.", errors: problems.map { (field: $0.key, rule: $0.problem) })
        }
        return order
    }

    /// The request's Idempotency-Key without the spaces and tabs around it, nil without one;
    /// 400 unless it is 1 to ``maximumKeyLength`` visible ASCII characters.
    static func idempotencyKey(_ request: HTTPRequest) throws(Problem) -> String? {
        guard let key = request.header("idempotency-key")?.trimmingOptionalWhitespace else { return nil }
        guard !key.isEmpty, key.utf8.count <= maximumKeyLength, key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E })
        else {
            throw Problem.badRequest(
                "Idempotency-Key must be 1 to \(maximumKeyLength) visible ASCII characters (a UUID will do).")
        }
        return key
    }

    /// `application/json`, any `+json` type, with or without parameters such as charset.
    /// 415 unless the body says it is JSON and is not compressed: a compressed body is not JSON
    /// until decoded, and the server decodes none (RFC 9110 §8.4.1). A body with no Content-Type
    /// is refused too: a web page on another site may send one without asking the browser's
    /// permission first (no CORS preflight), and a JSON Content-Type always needs it.
    static func requireJSONBody(_ request: HTTPRequest) throws(Problem) {
        guard let contentType = request.header("content-type") else {
            throw Problem.unsupportedMediaType(nil)
        }
        if !isJSON(contentType) {
            throw Problem.unsupportedMediaType(contentType)
        }
        if let encoding = request.header("content-encoding"),
            encoding.trimmingOptionalWhitespace.lowercased() != "identity"
        {
            throw Problem.unsupportedEncoding(encoding)
        }
    }

    static func isJSON(_ contentType: String) -> Bool {
        // Byte-wise: this runs on every POST, and Foundation's trimming bridges through NSString.
        var media = Substring(contentType).utf8.prefix { $0 != UInt8(ascii: ";") }
        while let first = media.first, first == 0x20 || first == 0x09 { media = media.dropFirst() }
        while let last = media.last, last == 0x20 || last == 0x09 { media = media.dropLast() }
        let lower = media.lazy.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        if lower.elementsEqual("application/json".utf8) { return true }
        return lower.starts(with: "application/".utf8) && media.count > 17
            && lower.suffix(5).elementsEqual("+json".utf8)
    }

    // MARK: - GET /api/cupcakes

    func list(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let parameters = try ListParameters(request.query)
        let page = try store.list(parameters.query)
        let totalPages = (page.total + parameters.perPage - 1) / parameters.perPage
        var writer = JSONWriter(capacity: 512 + page.orders.count * 320)
        writer.beginObject()
        writer.key("page")
        if let page = parameters.page { writer.integer(page) } else { writer.null() }
        writer.key("per_page")
        writer.integer(parameters.perPage)
        writer.key("total")
        writer.integer(page.total)
        writer.key("total_pages")
        writer.integer(totalPages)
        writer.key("data")
        writer.beginArray()
        for order in page.orders {
            order.write(&writer)
        }
        writer.endArray()
        writer.key("next_cursor")
        if page.hasMore, let last = page.orders.last {
            writer.string(ListCursor(query: parameters.query, perPage: parameters.perPage, after: last).text)
        } else {
            writer.null()
        }
        writer.endObject()
        respond(.json(200, writer.bytes))
    }

    /// An order id as written in a path: canonical decimal only (`7`, never `07`, `+7` or
    /// `7%00`), so that exactly one spelling names each order.
    static func canonicalID(_ text: String) -> Int64? {
        let utf8 = text.utf8
        guard let first = utf8.first, first >= UInt8(ascii: "1"), first <= UInt8(ascii: "9"),
            utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int64(text)
    }

    /// `{"isFavorite": true|false, "status": "baking", "reason": "…"}`: at least one of
    /// isFavorite and status, a reason only with a status, nothing else.
    static func decodeChange(_ body: [UInt8], actor: OrderActor) throws(Problem) -> (Bool?, StatusMove?) {
        let example = "send {\"status\": \"baking\"} or {\"isFavorite\": true}"
        guard let parsed = try? JSONValue.parse(body) else {
            throw Problem.badRequest("The body is not JSON; \(example).")
        }
        if let key = JSONDuplicateKeys.first(in: body) {
            throw Problem.badRequest("The body is not a JSON object: the key '\(key)' appears twice in one object.")
        }
        guard let members = parsed.members else {
            throw Problem.badRequest("The body must be a JSON object; \(example).")
        }
        var errors: [(field: String, rule: String)] = []
        let changeable: Set<String> = ["isFavorite", "status", "reason"]
        for key in members.map(\.key).sorted() where !changeable.contains(key) {
            errors.append((field: key, rule: "cannot be changed; only isFavorite and status (with a reason) can"))
        }
        var favorite: Bool?
        switch parsed["isFavorite"] {
        case nil: break
        case .bool(let value)?: favorite = value
        default: errors.append((field: "isFavorite", rule: "must be true or false"))
        }
        var status: OrderStatus?
        switch parsed["status"] {
        case nil: break
        case .string(let name)? where OrderStatus(wireName: name) != nil: status = OrderStatus(wireName: name)
        default: errors.append((field: "status", rule: "must be one of \(OrderStatus.wireNames)"))
        }
        var reason: String?
        switch parsed["reason"] {
        case nil: break
        case .string(let text)?:
            if parsed["status"] == nil { errors.append((field: "reason", rule: "goes with a status")) }
            reason = text
        default: errors.append((field: "reason", rule: "must be a string"))
        }
        if parsed["isFavorite"] == nil && parsed["status"] == nil {
            errors.insert((field: "status", rule: "is required unless isFavorite is given"), at: 0)
        }
        guard errors.isEmpty else {
            throw Problem.unprocessable("The change is not valid.", errors: errors)
        }
        try checkReason(reason)
        return (favorite, status.map { StatusMove(to: $0, by: actor, reason: reason) })
    }

    /// 422 for a reason that is wrong whatever the order, before the order is looked at: too
    /// long once trimmed, or holding a control, bidi or line-separator character anywhere (even
    /// where trimming would drop it: a reason is one line as sent).
    static func checkReason(_ reason: String?) throws(Problem) {
        guard let reason else { return }
        let refusal =
            reason.unicodeScalars.contains(where: TextSafety.mustEscape)
            ? .reasonUnsafe : StatusMove(to: .cancelled, by: .staff, reason: reason).reasonRefusal
        if let refusal {
            throw Problem.unprocessable(
                "The change is not valid.", errors: [(field: "reason", rule: refusal.description)])
        }
    }
}
