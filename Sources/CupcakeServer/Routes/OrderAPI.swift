import CupcakeDomain
import CupcakeJSON
import CupcakeStorage
import Foundation

/// The order service's HTTP API, in reqres's dialect:
///
/// - `POST /api/cupcakes` places an order (201, the order echoed with id, createdAt, costCents);
/// - `GET /api/cupcakes` lists orders a page at a time (reqres's list shape), filtered and sorted;
/// - `GET /api/cupcakes/{id}` answers `{"data": order}`; `PATCH` sets `isFavorite`; `DELETE`
///   cancels it (204);
/// - `GET /api/backup` answers a consistent copy of the database, where the store makes them;
/// - `GET /healthz` answers 200 without an API key; `GET /readyz` answers 200 when the database
///   takes orders, else 503 saying why.
///
/// Every error is problem+json; anything unexpected becomes a 500 that leaks nothing.
public final class OrderAPI: HTTPHandler {
    let store: any OrderStore
    let committer: GroupCommitter
    let access: AccessPolicy
    let log: AccessLog
    /// Failed keys per client address (always on).
    let failedKeys: TokenBuckets
    /// POSTs per client address, when limited.
    let posts: TokenBuckets?
    let now: @Sendable () -> Int64
    /// Makes backups, when the store can.
    let backups: BackupMaker?
    /// What `/metrics` reports.
    let metrics: Metrics

    /// The collection's path.
    static let collectionPath = "/api/cupcakes"
    /// The backup's path.
    static let backupPath = "/api/backup"
    /// Prices and checks an order without storing it (the storefront's quote).
    static let quotePath = "/api/quote"
    /// The longest Idempotency-Key accepted.
    static let maximumKeyLength = 255

    /// - Parameters:
    ///   - store: where orders live.
    ///   - committer: the group-commit writer in front of `store`.
    ///   - access: the keys, CORS origins and per-client limits (see ``AccessPolicy``).
    ///   - now: the clock, in milliseconds since 1970 UTC.
    public init(
        store: any OrderStore, committer: GroupCommitter, access: AccessPolicy, log: AccessLog,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        metrics: Metrics = Metrics()
    ) {
        self.metrics = metrics
        backups = store.backups.map { BackupMaker(source: $0, databasePath: $0.databasePath) }
        self.store = store
        self.committer = committer
        self.access = access
        failedKeys = TokenBuckets(
            rate: Double(max(1, access.failedKeysPerMinute)) / 60, burst: max(1, access.failedKeysPerMinute))
        posts =
            access.postsPerSecondPerClient > 0
            ? TokenBuckets(rate: access.postsPerSecondPerClient, burst: access.postBurstPerClient) : nil
        self.log = log
        self.now = now
    }

    public func handle(_ request: HTTPRequest, respond plainRespond: @escaping @Sendable (HTTPResponse) -> Void) {
        let respond = headersAdded(for: request, plainRespond)
        do {
            try route(request, respond: respond)
        } catch let problem as Problem {
            respond(problem.response)
        } catch let error as StorageError where error.code == .temporary {
            metrics.storageError(error.code.description)
            log.notice("error: request \(request.requestID): \(error)")
            respond(Problem.storageUnavailable().response)
        } catch let error as StorageError {
            metrics.storageError(error.code.description)
            log.notice("error: request \(request.requestID): \(error)")
            respond(Problem.internalError(requestID: request.requestID).response)
        } catch {
            log.notice("error: request \(request.requestID): \(error)")
            respond(Problem.internalError(requestID: request.requestID).response)
        }
    }

    private func route(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let path = request.path
        // The storefront's files: no key (the page asks the person for one when it needs it).
        if let asset = Storefront.assets[path] {
            try allow(request, ["GET", "HEAD"])
            respond(Storefront.response(for: asset, ifNoneMatch: request.header("if-none-match")))
            return
        }
        if path == "/openapi.yaml" {
            try allow(request, ["GET", "HEAD"])
            respond(
                HTTPResponse(
                    status: 200, headers: [("Content-Type", "application/yaml"), ("Cache-Control", "max-age=300")],
                    body: PackageResources.openapi_yaml))
            return
        }
        if path == "/healthz" {
            try allow(request, ["GET", "HEAD"])
            respond(.json(200, Array(#"{"status":"ok"}"#.utf8)))
            return
        }
        // Readiness, for a load balancer or an orchestrator: the process is up (/healthz) and
        // its database takes orders now. No key, like /healthz.
        if path == "/readyz" {
            try allow(request, ["GET", "HEAD"])
            if let reason = store.readiness() {
                throw Problem.unavailable("Not ready: \(reason).")
            }
            respond(.json(200, Array(#"{"status":"ready"}"#.utf8)))
            return
        }
        guard path == "/api" || path.hasPrefix("/api/") || path == "/metrics" else {
            throw Problem.notFound("There is nothing at \(path).")
        }
        if request.method == "OPTIONS" {
            try preflight(request, respond: respond)
            return
        }
        // A quote stores nothing and tells nothing about anyone: no key, so the page can show
        // prices before it asks for one.
        if path == Self.quotePath {
            try allow(request, ["POST"])
            try quote(request, respond: respond)
            return
        }
        let client = request.clientAddress
        let access = try authorize(request, client: client)
        if path == "/metrics" {
            try allow(request, ["GET", "HEAD"])
            guard access.isStaff else { throw Problem.forbidden("Metrics need the staff key.") }
            respond(
                HTTPResponse(
                    status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                    body: Array(metrics.text.utf8)))
            return
        }
        if path == Self.backupPath {
            try allow(request, ["GET"])
            guard access.isStaff else { throw Problem.forbidden("Backups need the staff key.") }
            try backup(request, respond: respond)
            return
        }
        let collection = Self.collectionPath
        if path == collection || path == collection + "/" {
            switch request.method {
            case "POST":
                if let wait = posts?.take(client) {
                    log.limited(.posts)
                    throw Problem.tooManyRequests(
                        "Too many orders from \(client) at once; retry after the pause.", retryAfter: wait)
                }
                try create(request, respond: respond)
            // HEAD is GET without the body (RFC 9110 §9.3.2); libmicrohttpd leaves the body out.
            case "GET", "HEAD":
                guard access.isStaff else {
                    throw Problem.forbidden(
                        "Listing orders needs the staff key; with the app key, ask for one order with its Order-Token.")
                }
                try list(request, respond: respond)
            default: throw Problem.methodNotAllowed(request.method, allowed: ["GET", "HEAD", "POST"])
            }
            return
        }
        guard path.hasPrefix(collection + "/") else {
            throw Problem.notFound("There is nothing at \(path).")
        }
        let idText = String(path.dropFirst(collection.count + 1))
        try allow(request, ["GET", "HEAD", "PATCH", "DELETE"])
        let notFound = Problem.notFound("There is no order with id '\(idText)'.")
        guard let id = Self.canonicalID(idText) else { throw notFound }
        if access == .app {
            // One's own order only, by its receipt token; any other answer would tell which ids
            // exist, so a missing or wrong token is the same 404 as a missing order.
            guard let stored = try store.order(id: id),
                ReceiptToken.matches(request.header("order-token"), stored: stored.receiptHash)
            else { throw notFound }
        }
        switch request.method {
        case "PATCH":
            try favorite(request, id: id, idText: idText, respond: respond)
        case "DELETE":
            guard try store.delete(id: id) else { throw notFound }
            respond(HTTPResponse(status: 204))
        default:
            guard let stored = try store.order(id: id) else { throw notFound }
            respond(.json(200, stored.dataJSON))
        }
    }

    // MARK: - GET /api/cupcakes

    private func list(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
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

    // MARK: - GET /api/backup

    private func backup(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        guard let backups else {
            throw Problem.notFound(
                "This server's database makes no backups through the API: back it up with the database's own tools.")
        }
        let started = backups.start { [log] result in
            switch result {
            case .success(let file):
                let stamp = Timestamp.iso8601(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
                    .replacingOccurrences(of: ":", with: "-")
                respond(
                    HTTPResponse(
                        status: 200,
                        headers: [
                            ("Content-Type", "application/vnd.sqlite3"),
                            ("Content-Disposition", "attachment; filename=\"cupcake-backup-\(stamp).sqlite\""),
                            ("Cache-Control", "no-store"),
                        ], file: file))
            case .failure(let error):
                log.notice("error: backup for request \(request.requestID): \(error)")
                respond(
                    error.code == .temporary
                        ? Problem.storageUnavailable().response
                        : Problem.internalError(requestID: request.requestID).response)
            }
        }
        guard started else {
            throw Problem.conflict("A backup is already being made; retry when it is done.")
        }
    }

    // MARK: - PATCH /api/cupcakes/{id}

    private func favorite(
        _ request: HTTPRequest, id: Int64, idText: String, respond: @escaping @Sendable (HTTPResponse) -> Void
    ) throws {
        try Self.requireJSONBody(request)
        let isFavorite = try Self.decodeFavoritePatch(request.body)
        guard let stored = try store.setFavorite(id: id, isFavorite) else {
            throw Problem.notFound("There is no order with id '\(idText)'.")
        }
        respond(.json(200, stored.dataJSON))
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

    /// `{"isFavorite": true|false}` and nothing else.
    static func decodeFavoritePatch(_ body: [UInt8]) throws(Problem) -> Bool {
        guard let parsed = try? JSONValue.parse(body) else {
            throw Problem.badRequest("The body is not JSON; send {\"isFavorite\": true} or false.")
        }
        if let key = JSONDuplicateKeys.first(in: body) {
            throw Problem.badRequest("The body is not a JSON object: the key '\(key)' appears twice in one object.")
        }
        guard let members = parsed.members else {
            throw Problem.badRequest("The body must be a JSON object such as {\"isFavorite\": true}.")
        }
        var errors: [(field: String, rule: String)] = []
        for key in members.map(\.key).sorted() where key != "isFavorite" {
            errors.append((field: key, rule: "cannot be changed; only isFavorite can"))
        }
        guard case .bool(let value)? = parsed["isFavorite"] else {
            errors.insert(
                (field: "isFavorite", rule: parsed["isFavorite"] == nil ? "is required" : "must be true or false"),
                at: 0)
            throw Problem.unprocessable("The change is not valid.", errors: errors)
        }
        guard errors.isEmpty else {
            throw Problem.unprocessable("The change is not valid.", errors: errors)
        }
        return value
    }

    private func allow(_ request: HTTPRequest, _ methods: [String]) throws(Problem) {
        guard methods.contains(request.method) else {
            throw Problem.methodNotAllowed(request.method, allowed: methods)
        }
    }

    /// The request's access, from its key (see ``AccessPolicy``); throws 401 for a missing or
    /// wrong key, 429 once a client has sent too many of those, and 403 for a keyless server
    /// asked through a name that is not loopback.
    private func authorize(_ request: HTTPRequest, client: String) throws(Problem) -> Access {
        guard access.hasKeys else {
            if !access.insecureNoKeys, let host = request.header("host"), !ClientAddress.isLoopbackHost(host) {
                throw Problem.forbidden(
                    "This server has no keys, so it answers only requests addressed to localhost or a loopback "
                        + "address, not '\(host)'. Give it --api-key and --staff-key to serve other names.")
            }
            return .open
        }
        // Checked before the key, so that a client guessing keys learns nothing more.
        if let wait = failedKeys.waitingTime(client) {
            log.limited(.failedKeys)
            throw Problem.tooManyRequests(
                "Too many requests with a missing or wrong key from \(client); retry later.", retryAfter: wait)
        }
        if let given = request.header("x-api-key") {
            if let staffKey = access.staffKey, Self.constantTimeEqual(given, staffKey) { return .staff }
            if let appKey = access.appKey, Self.constantTimeEqual(given, appKey) { return .app }
        }
        _ = failedKeys.take(client)
        throw Problem.unauthorized()
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }

    // MARK: - POST /api/cupcakes

    private func create(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
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

    /// POST /api/quote: the order's line items, total and broken rules (``Quote``), 200 even for
    /// an order that breaks rules; 400 or 422 only for a body that is not an order at all.
    private func quote(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        try Self.requireJSONBody(request)
        let quote = Quote(try Self.decodeOrder(request.body))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        respond(.json(200, Array(try encoder.encode(quote))))
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
}
