import CupcakeDomain
import CupcakeJSON
import CupcakeStorage
import Foundation

/// The order service's HTTP API, in reqres's dialect: its routes are ``Route/table``; the
/// handlers are by concern (`OrderRoutes`, `AdminRoutes`, `PublicRoutes`); keys, the per-client
/// limits and CORS are applied around them here and in `OrderAPI+Browsers`.
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
    /// Carries the event log to streams, when the server runs one.
    let events: EventHub?
    /// Delivers webhooks, when the server runs them.
    let webhooks: WebhookDispatcher?
    /// How webhooks are delivered (which receivers are allowed).
    let webhookSettings: WebhookSettings

    /// The collection's path.
    static let collectionPath = "/api/cupcakes"
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
        metrics: Metrics = Metrics(), events: EventHub? = nil, webhooks: WebhookDispatcher? = nil,
        webhookSettings: WebhookSettings = WebhookSettings()
    ) {
        self.metrics = metrics
        self.events = events
        self.webhooks = webhooks
        self.webhookSettings = webhookSettings
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

    /// Runs the request through the route table (``Route/table``): 404 for a path no route has
    /// (after asking for a key in the API's namespace), the CORS preflight, the key, 405, who may
    /// call the method, the POST rate, then the route's handler.
    private func route(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) throws {
        let path = request.path
        guard let (route, rest) = Route.route(at: path) else {
            if Route.isAPI(path) { _ = try authorize(request, client: request.clientAddress) }
            throw Problem.notFound("There is nothing at \(path).")
        }
        if route.isAPI, request.method == "OPTIONS" {
            try preflight(request, allowed: route.allowed + ["OPTIONS"], respond: respond)
            return
        }
        let client = request.clientAddress
        let access = route.needsKey ? try authorize(request, client: client) : Access.open
        guard let method = route.method(request.method) else {
            throw Problem.methodNotAllowed(request.method, allowed: route.allowed)
        }
        if case .staff(let refusal) = method.caller, !access.isStaff { throw Problem.forbidden(refusal) }
        if method.limited, let wait = posts?.take(client) {
            log.limited(.posts)
            throw Problem.tooManyRequests(
                "Too many orders from \(client) at once; retry after the pause.", retryAfter: wait)
        }
        switch route.endpoint {
        case .storefront: try storefront(request, respond: respond)
        case .openAPI: openAPI(respond: respond)
        case .health: respond(.json(200, Array(#"{"status":"ok"}"#.utf8)))
        case .readiness: try readiness(respond: respond)
        case .quote: try quote(request, respond: respond)
        case .metrics: metricsText(respond: respond)
        case .backup: try backup(request, respond: respond)
        case .orders:
            if request.method == "POST" {
                try create(request, respond: respond)
            } else {
                try list(request, respond: respond)
            }
        case .order:
            try order(request, idText: rest ?? "", access: access, respond: respond)
        case .orderEvents:
            try orderEvents(request, idText: rest ?? "", access: access, respond: respond)
        case .eventStream:
            try eventStream(request, respond: respond)
        case .events: try eventFeed(request, respond: respond)
        case .redeliver: try redeliver(idText: rest ?? "", respond: respond)
        case .webhookEndpoints:
            if request.method == "POST" {
                try createWebhookEndpoint(request, respond: respond)
            } else {
                try listWebhookEndpoints(respond: respond)
            }
        case .webhookEndpoint: try webhookEndpoint(request, idText: rest ?? "", respond: respond)
        case .webhookRotation: try rotateWebhookSecret(idText: rest ?? "", respond: respond)
        case .webhookDeliveries: try webhookDeliveries(request, idText: rest ?? "", respond: respond)
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
}
