import CupcakeTestSupport
import Foundation
import Testing

/// Who may do what, through a real `cupcake serve` with both keys: every role against every
/// endpoint, the receipt token, a keyless server's Host check, CORS.
@Suite(.serialized) struct AccessTests {
    static let appKey = "app-key-1"
    static let staffKey = "staff-key-1"

    /// One row of the table: a role's request and the status it must get.
    struct Case: Sendable, CustomStringConvertible {
        enum Role: String, Sendable { case none, app, staff }
        enum Token: Sendable { case none, own, other }
        var role: Role
        var method: String
        /// `{id}` is the order the role's caller placed, `{other}` another caller's.
        var path: String
        var token: Token = .none
        var status: Int
        var description: String { "\(role) \(method) \(path) token=\(token) → \(status)" }
    }

    static let cases: [Case] = [
        // Placing an order: either key; no key is 401.
        Case(role: .none, method: "POST", path: "/api/cupcakes", status: 401),
        Case(role: .app, method: "POST", path: "/api/cupcakes", status: 201),
        Case(role: .staff, method: "POST", path: "/api/cupcakes", status: 201),
        // Listing: staff only.
        Case(role: .none, method: "GET", path: "/api/cupcakes", status: 401),
        Case(role: .app, method: "GET", path: "/api/cupcakes", status: 403),
        Case(role: .staff, method: "GET", path: "/api/cupcakes", status: 200),
        // One order: the app key with that order's token; without it, or with another order's,
        // exactly the answer a missing order gets.
        Case(role: .app, method: "GET", path: "/api/cupcakes/{id}", token: .own, status: 200),
        Case(role: .app, method: "GET", path: "/api/cupcakes/{id}", status: 404),
        Case(role: .app, method: "GET", path: "/api/cupcakes/{other}", token: .own, status: 404),
        Case(role: .app, method: "GET", path: "/api/cupcakes/999999", token: .own, status: 404),
        Case(role: .app, method: "PATCH", path: "/api/cupcakes/{id}", token: .own, status: 200),
        Case(role: .app, method: "PATCH", path: "/api/cupcakes/{other}", token: .own, status: 404),
        Case(role: .app, method: "DELETE", path: "/api/cupcakes/{other}", token: .own, status: 404),
        Case(role: .app, method: "DELETE", path: "/api/cupcakes/{id}", token: .own, status: 204),
        Case(role: .staff, method: "GET", path: "/api/cupcakes/{other}", status: 200),
        Case(role: .staff, method: "PATCH", path: "/api/cupcakes/{other}", status: 200),
        Case(role: .staff, method: "DELETE", path: "/api/cupcakes/{other}", status: 204),
        Case(role: .none, method: "GET", path: "/api/cupcakes/{id}", token: .own, status: 401),
        // Backups: staff only.
        Case(role: .app, method: "GET", path: "/api/backup", status: 403),
        Case(role: .staff, method: "GET", path: "/api/backup", status: 200),
        // Metrics: staff only.
        Case(role: .none, method: "GET", path: "/metrics", status: 401),
        Case(role: .app, method: "GET", path: "/metrics", status: 403),
        Case(role: .staff, method: "GET", path: "/metrics", status: 200),
        // Health needs nothing.
        Case(role: .none, method: "GET", path: "/healthz", status: 200),
    ]

    @Test(arguments: cases)
    func eachRoleGetsWhatItMay(_ item: Case) throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--quiet", "--api-key", Self.appKey, "--staff-key", Self.staffKey])
        func place(_ name: String) throws -> (id: String, token: String) {
            let body = HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: name)
            let created = try RawHTTP.postOrder(port: server.port, json: body, headers: ["x-api-key": Self.appKey])
            return (
                try #require(created.json?["id"] as? String), try #require(created.json?["receiptToken"] as? String)
            )
        }
        let mine = try place("Mine")
        let other = try place("Other")
        var headers: [String: String] = [:]
        switch item.role {
        case .none: break
        case .app: headers["x-api-key"] = Self.appKey
        case .staff: headers["x-api-key"] = Self.staffKey
        }
        switch item.token {
        case .none: break
        case .own: headers["Order-Token"] = mine.token
        case .other: headers["Order-Token"] = other.token
        }
        let path = item.path.replacingOccurrences(of: "{id}", with: mine.id)
            .replacingOccurrences(of: "{other}", with: other.id)
        let body: Data? =
            switch item.method {
            case "POST": Data(HostileCorpus.valid.utf8)
            case "PATCH": Data(#"{"isFavorite": true}"#.utf8)
            default: nil
            }
        let response = try RawHTTP.request(
            port: server.port, method: item.method, path: path, headers: headers, body: body)
        #expect(response.status == item.status, "\(item): \(response.text)")
        if item.status == 201 {
            let token = try #require(response.json?["receiptToken"] as? String)
            #expect(token.hasPrefix("rct_") && token.count >= 26)  // at least 128 bits
        }
        if item.status == 404 {
            // Indistinguishable from an order that does not exist.
            let missing = try RawHTTP.request(
                port: server.port, method: "GET", path: "/api/cupcakes/999999", headers: headers)
            #expect(response.json?["title"] as? String == missing.json?["title"] as? String)
        }
        if path.hasPrefix("/api") {
            #expect(response.headers["x-content-type-options"] == "nosniff")
            #expect(response.headers["cache-control"] == "no-store")
        }
        #expect(server.stop() == 0)
    }

    @Test func theTokenIsStoredOnlyAsItsHash() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let server = try ServerProcess(
            databasePath: path, arguments: ["--quiet", "--api-key", Self.appKey, "--staff-key", Self.staffKey])
        let created = try RawHTTP.postOrder(
            port: server.port, json: HostileCorpus.valid,
            headers: ["x-api-key": Self.appKey, "Idempotency-Key": "hash-1"])
        let token = try #require(created.json?["receiptToken"] as? String)
        // A replay does not show it again.
        let replay = try RawHTTP.postOrder(
            port: server.port, json: HostileCorpus.valid,
            headers: ["x-api-key": Self.appKey, "Idempotency-Key": "hash-1"])
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(replay.json?["receiptToken"] == nil)
        #expect(server.stop() == 0)
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(file.range(of: Data(token.utf8)) == nil)
        let dump = try DatabaseFileInspector(path: path).sqlite3("SELECT hex(receipt_hash) FROM orders").stdout
        #expect(dump.trimmingCharacters(in: .whitespacesAndNewlines).count == 64)  // a SHA-256
    }

    @Test(arguments: ["evil.example", "evil.example:8080", "127.0.0.1.nip.io", "[::2]"])
    func aKeylessServerRefusesARebindingHost(host: String) throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"), arguments: ["--quiet"])
        let request = "GET /api/cupcakes HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
        let response = try RawHTTP.exchange(port: server.port, bytes: Data(request.utf8))
        #expect(response.status == 403)
        #expect(response.json?["detail"] as? String ?? "" != "")
        for loopback in ["localhost", "localhost:9", "127.0.0.1", "127.9.9.9:80", "[::1]:80", "app.localhost"] {
            let allowed = try RawHTTP.exchange(
                port: server.port,
                bytes: Data("GET /api/cupcakes HTTP/1.1\r\nHost: \(loopback)\r\nConnection: close\r\n\r\n".utf8))
            #expect(allowed.status == 200, "\(loopback)")
        }
        #expect(server.stop() == 0)
    }

    @Test func aKeylessServerWillNotListenBeyondLoopbackUnlessToldTo() throws {
        let directory = try TemporaryDirectory()
        let refused = try ProcessRunner.cupcake(
            ["serve", "--host", "0.0.0.0", "--port", "0", "--database", directory.path("a.sqlite")], timeout: 20)
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("--insecure-no-keys"))
        #expect(!FileManager.default.fileExists(atPath: directory.path("a.sqlite")))
        let open = try ServerProcess(
            databasePath: directory.path("b.sqlite"), arguments: ["--quiet", "--insecure-no-keys"])
        #expect(open.log.contains("NO KEYS"))
        #expect(open.stop() == 0)
    }

    @Test func corsAnswersTheNamedOriginsOnly() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path("server.json")
        try Data(#"{"corsOrigins": ["https://shop.example"]}"#.utf8).write(to: URL(fileURLWithPath: config))
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--quiet", "--config", config, "--api-key", Self.appKey, "--staff-key", Self.staffKey])
        func preflight(_ origin: String, _ method: String) throws -> RawHTTP.Response {
            try RawHTTP.request(
                port: server.port, method: "OPTIONS", path: "/api/cupcakes",
                headers: ["Origin": origin, "Access-Control-Request-Method": method])
        }
        let allowed = try preflight("https://shop.example", "POST")
        #expect(allowed.status == 204)
        #expect(allowed.headers["access-control-allow-origin"] == "https://shop.example")
        #expect(allowed.headers["access-control-allow-headers"]?.contains("Idempotency-Key") == true)
        #expect(allowed.headers["access-control-allow-headers"]?.contains("If-Match") == true)
        #expect(allowed.headers["access-control-allow-methods"]?.contains("PATCH") == true)
        for origin in ["https://evil.example", "http://shop.example", "https://shop.example.evil.example"] {
            let refused = try preflight(origin, "POST")
            #expect(refused.status == 403, "\(origin)")
            #expect(refused.headers["access-control-allow-origin"] == nil)
        }
        let wrongMethod = try preflight("https://shop.example", "PUT")
        #expect(wrongMethod.status == 403)
        #expect(wrongMethod.headers["access-control-allow-methods"] == nil)
        // The real request from the allowed origin may be read by its page; another origin's not.
        let posted = try RawHTTP.postOrder(
            port: server.port, json: HostileCorpus.valid,
            headers: ["x-api-key": Self.appKey, "Origin": "https://shop.example"])
        #expect(posted.status == 201)
        #expect(posted.headers["access-control-allow-origin"] == "https://shop.example")
        #expect(posted.headers["access-control-expose-headers"]?.contains("Location") == true)
        #expect(posted.headers["access-control-expose-headers"]?.contains("ETag") == true)
        let other = try RawHTTP.postOrder(
            port: server.port, json: HostileCorpus.valid,
            headers: ["x-api-key": Self.appKey, "Origin": "https://evil.example"])
        #expect(other.headers["access-control-allow-origin"] == nil)
        #expect(server.stop() == 0)
    }
}
