/// One route of the service, declared once in ``Route/table``: where it is, which methods it
/// answers and who may call each. The router derives from the table what every route shares:
/// 404 for a path no route has, 405 and `Allow` for a method a route does not answer, the CORS
/// preflight's methods, the label `/metrics` counts a path under, and the paths and methods the
/// OpenAPI description must list (`RouteTableTests`). Hummingbird's router is the model.
struct Route: Sendable {
    /// What a route serves: the handler the API runs for it.
    enum Endpoint: Sendable {
        case storefront, openAPI, health, readiness, quote, metrics, backup, orders, order, orderEvents, eventStream
        case events, redeliver, webhookEndpoints, webhookEndpoint, webhookRotation, webhookDeliveries
    }

    /// Where a route is.
    enum Path: Sendable {
        /// These paths exactly.
        case exact([String])
        /// Any path under this prefix; the rest is the order's id.
        case item(prefix: String)
        /// A path under this prefix ending in this suffix; what lies between is the order's id.
        case itemChild(prefix: String, suffix: String)
        /// The storefront's files.
        case assets
    }

    /// Who may call a method.
    enum Caller: Sendable, Equatable {
        /// Anyone, without a key.
        case anyone
        /// The app key or the staff key.
        case keyHolder
        /// The staff key; anyone else is answered 403 with `refusal`.
        case staff(refusal: String)
        /// The staff key, or the app key with the order's receipt token (`Order-Token`); for
        /// anyone else the order does not exist (404).
        case orderHolder
    }

    /// One method a route answers, and who may call it. `HEAD` goes wherever `GET` does,
    /// unless the GET does work a HEAD should not start (a backup).
    struct Method: Sendable {
        var name: String
        var caller: Caller
        /// Limited per client by the POST rate (``AccessPolicy/postsPerSecondPerClient``).
        var limited = false
        /// For GET: whether HEAD is answered too.
        var answersHead = true
    }

    var endpoint: Endpoint
    var path: Path
    var methods: [Method]
    /// Under /api: CORS applies (preflights, headers for allowed origins) and every answer is
    /// `no-store`.
    var isAPI: Bool
    /// The path as the OpenAPI description writes it (`/api/cupcakes/{id}`); nil for the
    /// storefront's files, which it does not describe.
    var template: String?
    /// The label `/metrics` counts it under.
    var label: String

    /// The methods as a 405's `Allow` lists them: HEAD after GET. (A preflight's adds OPTIONS.)
    var allowed: [String] {
        var names: [String] = []
        for method in methods {
            names.append(method.name)
            if method.name == "GET", method.answersHead { names.append("HEAD") }
        }
        return names
    }

    /// The rule for `method` (HEAD follows GET's), or nil when the route does not answer it.
    func method(_ name: String) -> Method? {
        if name == "HEAD" { return methods.first { $0.name == "GET" && $0.answersHead } }
        return methods.first { $0.name == name }
    }

    /// Whether any method needs a key.
    var needsKey: Bool { methods.contains { $0.caller != .anyone } }

    /// Whether the route is at `path`; for an item route, with the rest of the path.
    func matches(_ path: String) -> (Bool, rest: String?) {
        switch self.path {
        case .exact(let paths): (paths.contains(path), nil)
        case .item(let prefix):
            path.hasPrefix(prefix) && path.utf8.count > prefix.utf8.count
                ? (true, String(path.dropFirst(prefix.count))) : (false, nil)
        case .itemChild(let prefix, let suffix):
            path.hasPrefix(prefix) && path.hasSuffix(suffix) && path.utf8.count > prefix.utf8.count + suffix.utf8.count
                ? (true, String(path.dropFirst(prefix.count).dropLast(suffix.count))) : (false, nil)
        case .assets: (Storefront.assets[path] != nil, nil)
        }
    }

    /// The service's routes, the busiest first (the router tries them in order; no two share a
    /// path).
    static let table: [Route] = [
        Route(
            endpoint: .orders, path: .exact(["/api/cupcakes", "/api/cupcakes/"]),
            methods: [
                Method(
                    name: "GET",
                    caller: .staff(
                        refusal:
                            "Listing orders needs the staff key; with the app key, ask for one order with its Order-Token."
                    )),
                Method(name: "POST", caller: .keyHolder, limited: true),
            ], isAPI: true, template: "/api/cupcakes", label: "/api/cupcakes"),
        // Before the order's own route, which would take "7/events" for an id.
        Route(
            endpoint: .orderEvents, path: .itemChild(prefix: "/api/cupcakes/", suffix: "/events"),
            methods: [Method(name: "GET", caller: .orderHolder, answersHead: false)], isAPI: true,
            template: "/api/cupcakes/{id}/events", label: "/api/cupcakes/{id}/events"),
        Route(
            endpoint: .order, path: .item(prefix: "/api/cupcakes/"),
            methods: [
                Method(name: "GET", caller: .orderHolder), Method(name: "PATCH", caller: .orderHolder),
                Method(name: "DELETE", caller: .orderHolder),
            ], isAPI: true, template: "/api/cupcakes/{id}", label: "/api/cupcakes/{id}"),
        Route(
            endpoint: .eventStream, path: .exact(["/api/events/stream"]),
            methods: [
                Method(
                    name: "GET", caller: .staff(refusal: "The stream of every order's events needs the staff key."),
                    answersHead: false)
            ], isAPI: true, template: "/api/events/stream", label: "/api/events/stream"),
        Route(
            endpoint: .events, path: .exact(["/api/events"]),
            methods: [Method(name: "GET", caller: .staff(refusal: "The events feed needs the staff key."))],
            isAPI: true, template: "/api/events", label: "/api/events"),
        Route(
            endpoint: .redeliver, path: .itemChild(prefix: "/api/events/", suffix: "/redeliver"),
            methods: [Method(name: "POST", caller: .staff(refusal: "Redelivering events needs the staff key."))],
            isAPI: true, template: "/api/events/{id}/redeliver", label: "/api/events/{id}/redeliver"),
        Route(
            endpoint: .webhookEndpoints, path: .exact(["/api/webhook-endpoints", "/api/webhook-endpoints/"]),
            methods: [
                Method(name: "GET", caller: .staff(refusal: "Webhook endpoints need the staff key.")),
                Method(name: "POST", caller: .staff(refusal: "Webhook endpoints need the staff key.")),
            ], isAPI: true, template: "/api/webhook-endpoints", label: "/api/webhook-endpoints"),
        // Before the endpoint's own route, which would take "3/deliveries" for an id.
        Route(
            endpoint: .webhookRotation, path: .itemChild(prefix: "/api/webhook-endpoints/", suffix: "/rotate-secret"),
            methods: [Method(name: "POST", caller: .staff(refusal: "Webhook endpoints need the staff key."))],
            isAPI: true, template: "/api/webhook-endpoints/{id}/rotate-secret",
            label: "/api/webhook-endpoints/{id}/rotate-secret"),
        Route(
            endpoint: .webhookDeliveries, path: .itemChild(prefix: "/api/webhook-endpoints/", suffix: "/deliveries"),
            methods: [Method(name: "GET", caller: .staff(refusal: "Webhook endpoints need the staff key."))],
            isAPI: true, template: "/api/webhook-endpoints/{id}/deliveries",
            label: "/api/webhook-endpoints/{id}/deliveries"),
        Route(
            endpoint: .webhookEndpoint, path: .item(prefix: "/api/webhook-endpoints/"),
            methods: [
                Method(name: "GET", caller: .staff(refusal: "Webhook endpoints need the staff key.")),
                Method(name: "PATCH", caller: .staff(refusal: "Webhook endpoints need the staff key.")),
                Method(name: "DELETE", caller: .staff(refusal: "Webhook endpoints need the staff key.")),
            ], isAPI: true, template: "/api/webhook-endpoints/{id}", label: "/api/webhook-endpoints/{id}"),
        Route(
            endpoint: .quote, path: .exact(["/api/quote"]), methods: [Method(name: "POST", caller: .anyone)],
            isAPI: true, template: "/api/quote", label: "/api/quote"),
        Route(
            endpoint: .health, path: .exact(["/healthz"]), methods: [Method(name: "GET", caller: .anyone)],
            isAPI: false, template: "/healthz", label: "/healthz"),
        Route(
            endpoint: .readiness, path: .exact(["/readyz"]), methods: [Method(name: "GET", caller: .anyone)],
            isAPI: false, template: "/readyz", label: "/readyz"),
        Route(
            endpoint: .metrics, path: .exact(["/metrics"]),
            methods: [Method(name: "GET", caller: .staff(refusal: "Metrics need the staff key."))], isAPI: true,
            template: "/metrics", label: "/metrics"),
        Route(
            endpoint: .backup, path: .exact(["/api/backup"]),
            methods: [Method(name: "GET", caller: .staff(refusal: "Backups need the staff key."), answersHead: false)],
            isAPI: true,
            template: "/api/backup", label: "/api/backup"),
        Route(
            endpoint: .openAPI, path: .exact(["/openapi.yaml"]), methods: [Method(name: "GET", caller: .anyone)],
            isAPI: false, template: "/openapi.yaml", label: "/openapi.yaml"),
        Route(
            endpoint: .storefront, path: .assets, methods: [Method(name: "GET", caller: .anyone)], isAPI: false,
            template: nil, label: "storefront"),
    ]

    /// The route at `path`, and the rest of the path for an item route.
    static func route(at path: String) -> (route: Route, rest: String?)? {
        for route in table {
            let (matched, rest) = route.matches(path)
            if matched { return (route, rest) }
        }
        return nil
    }

    /// Whether `path` is in the API's namespace, where a key is asked for before anything else
    /// is said about it (even that nothing is there).
    static func isAPI(_ path: String) -> Bool {
        path == "/api" || path.hasPrefix("/api/") || path == "/metrics"
    }
}
