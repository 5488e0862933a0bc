import CupcakeTestSupport
import Foundation
import Testing

/// The limits that keep one client from crowding out the rest, and the input rules, through a
/// real `cupcake serve`. Each client address is a loopback address of its own (127.0.0.2, …).
@Suite struct AbuseLimitTests {
    static func config(_ json: String, in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("server-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func oneAddressCannotTakeEveryConnection() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"), arguments: ["--quiet"])
        // 64 idle connections from 127.0.0.2: the default limit.
        var held: [TestSocket] = []
        for _ in 0..<64 { held.append(try TestSocket(port: server.port, timeout: 5, from: "127.0.0.2")) }
        // Let the server register them all (bounded).
        var over: TestSocket?
        var closedAtOnce = false
        for _ in 0..<50 where !closedAtOnce {
            over = try TestSocket(port: server.port, timeout: 2, from: "127.0.0.2")
            usleep(100_000)
            closedAtOnce = over?.isClosedByPeer() ?? false
        }
        #expect(closedAtOnce, "the 65th connection from one address was kept")
        // Another client is served meanwhile, and the held connections still work.
        let order = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid, from: "127.0.0.3")
        #expect(order.status == 201)
        try held[0].send(Data("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        #expect(held[0].receiveResponse(deadline: Date().addingTimeInterval(5))?.status == 200)
        held.removeAll()
        #expect(server.stop() == 0)
        print("RELIABILITY limits: the 65th connection from one address closed at once; another address served")
    }

    @Test func postsPerClientAreRateLimitedWhenConfigured() throws {
        let directory = try TemporaryDirectory()
        let config = try Self.config(#"{"postsPerSecondPerClient": 0.5, "postBurstPerClient": 3}"#, in: directory)
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--quiet", "--config", config])
        let statuses = try (0..<5).map { _ in
            try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid, from: "127.0.0.2").status
        }
        #expect(statuses == [201, 201, 201, 429, 429])
        let limited = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid, from: "127.0.0.2")
        #expect(limited.status == 429)
        #expect(limited.headers["content-type"] == "application/problem+json")
        #expect(Int(limited.headers["retry-after"] ?? "") ?? 0 >= 1)
        // Another address has its own bucket; reads are not limited.
        #expect(try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid, from: "127.0.0.3").status == 201)
        #expect(
            try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes", from: "127.0.0.2").status
                == 200)
        #expect(server.stop() == 0)
    }

    @Test func failedKeysSlowAnAddressDown() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--quiet", "--api-key", "app", "--staff-key", "staff"])
        func list(_ key: String, from address: String) throws -> RawHTTP.Response {
            try RawHTTP.request(
                port: server.port, method: "GET", path: "/api/cupcakes", headers: ["x-api-key": key], from: address)
        }
        let wrong = try (0..<20).map { try list("guess-\($0)", from: "127.0.0.2").status }
        #expect(wrong.allSatisfy { $0 == 401 })
        let throttled = try list("guess-21", from: "127.0.0.2")
        #expect(throttled.status == 429)
        #expect(Int(throttled.headers["retry-after"] ?? "") ?? 0 >= 1)
        // While throttled, even the right key from there gets 429 (a guesser learns nothing).
        #expect(try list("staff", from: "127.0.0.2").status == 429)
        #expect(try list("staff", from: "127.0.0.3").status == 200)
        #expect(server.stop() == 0)
        // Counted in the log (summarized every 10 s, and at the latest on the next summary).
    }

    @Test func forwardedForIsBelievedOnlyFromATrustedProxy() throws {
        let directory = try TemporaryDirectory()
        let config = try Self.config(#"{"trustedProxies": ["127.0.0.2"], "failedKeysPerMinute": 2}"#, in: directory)
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--config", config, "--api-key", "app", "--staff-key", "staff"])
        func wrongKey(from address: String, forwardedFor: String) throws -> Int {
            try RawHTTP.request(
                port: server.port, method: "GET", path: "/api/cupcakes",
                headers: ["x-api-key": "nope", "X-Forwarded-For": forwardedFor], from: address
            ).status
        }
        // Behind the proxy, clients are told apart by what it forwards.
        #expect(try (0..<3).map { _ in try wrongKey(from: "127.0.0.2", forwardedFor: "10.0.0.1") } == [401, 401, 429])
        #expect(try wrongKey(from: "127.0.0.2", forwardedFor: "10.0.0.2") == 401)
        // A client that is not the proxy cannot pose as another with the header.
        #expect(try (0..<3).map { _ in try wrongKey(from: "127.0.0.3", forwardedFor: "10.0.0.9") } == [401, 401, 429])
        #expect(try wrongKey(from: "127.0.0.3", forwardedFor: "10.0.0.8") == 429)
        #expect(server.stop() == 0)
        #expect(server.log.contains("client=10.0.0.1"))
        #expect(server.log.contains("client=127.0.0.3"))
        #expect(!server.log.contains("client=10.0.0.9"))
    }

    /// One input rule: a request, and the status it must get.
    struct InputCase: Sendable, CustomStringConvertible {
        var name: String
        var method = "GET"
        var path: String
        var body: String?
        var status: Int
        var description: String { name }
    }

    static let longScalars = String(repeating: "é", count: 101)  // 101 scalars, 202 bytes
    static let wideBytes = String(repeating: "😀", count: 101)  // 101 scalars, 404 bytes
    static let combining = "a" + String(repeating: "\u{301}", count: 32_000)
    static func order(name: String) -> String {
        HostileCorpus.valid.replacingOccurrences(of: "\"Taylor\"", with: "\"\(name)\"")
    }

    static let inputCases: [InputCase] = [
        InputCase(name: "a leading zero", path: "/api/cupcakes/01", status: 404),
        InputCase(name: "a plus sign", path: "/api/cupcakes/+1", status: 404),
        InputCase(name: "an escaped NUL in the path", path: "/api/cupcakes/1%00", status: 400),
        InputCase(name: "an escaped NUL in a parameter", path: "/api/cupcakes?name_prefix=a%00b", status: 400),
        InputCase(name: "an unknown parameter", path: "/api/cupcakes?favourite=true", status: 400),
        InputCase(name: "page past 10,000 orders deep", path: "/api/cupcakes?page=101&per_page=100", status: 400),
        InputCase(name: "the deepest page allowed", path: "/api/cupcakes?page=100&per_page=100", status: 200),
        InputCase(name: "a bad cursor", path: "/api/cupcakes?cursor=nope", status: 400),
        InputCase(
            name: "a duplicate key", method: "POST", path: "/api/cupcakes",
            body: #"{"type":2,"quantity":5,"name":"A","name":"B","streetAddress":"1","city":"C","zip":"1"}"#,
            status: 400),
        InputCase(
            name: "a duplicate key by escape", method: "POST", path: "/api/cupcakes",
            body: #"{"type":2,"quantity":5,"name":"A","na\u006de":"B","streetAddress":"1","city":"C","zip":"1"}"#,
            status: 400),
        InputCase(
            name: "101 scalars", method: "POST", path: "/api/cupcakes", body: order(name: longScalars), status: 422),
        InputCase(name: "404 bytes", method: "POST", path: "/api/cupcakes", body: order(name: wideBytes), status: 422),
        InputCase(
            name: "one letter and 32,000 combining marks", method: "POST", path: "/api/cupcakes",
            body: order(name: combining), status: 422),
        InputCase(
            name: "100 scalars in 400 bytes", method: "POST", path: "/api/cupcakes",
            body: order(name: String(repeating: "😀", count: 100)), status: 201),
    ]

    @Test(arguments: inputCases)
    func inputRules(_ item: InputCase) throws {
        let directory = try TemporaryDirectory()
        let config = try Self.config(#"{"bodyLimitBytes": 1000000}"#, in: directory)
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--quiet", "--config", config])
        _ = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid)
        let response = try RawHTTP.request(
            port: server.port, method: item.method, path: item.path, body: item.body.map { Data($0.utf8) })
        #expect(response.status == item.status, "\(item.name): \(response.text.prefix(300))")
        if item.status == 400, item.path.contains("favourite") {
            #expect((response.json?["detail"] as? String)?.contains("'favourite'") == true)
        }
        #expect(server.stop() == 0)
    }
}
