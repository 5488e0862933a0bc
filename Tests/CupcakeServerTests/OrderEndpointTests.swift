import CupcakeStorage
import CupcakeTestSupport
import Foundation
import Testing

/// The HTTP API against a real in-process server (libmicrohttpd + SQLite file) on a free port.
@Suite struct OrderEndpointTests {
    static let valid =
        #"{"type":2,"quantity":5,"specialRequestEnabled":true,"extraFrosting":true,"addSprinkles":false,"name":"Taylor","streetAddress":"1 Main St","city":"Nashville","zip":"37201"}"#

    @Test(arguments: Engine.allCases)
    func postAnswers201WithTheNormalizedOrderAndItsPrice(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let response = try RawHTTP.postOrder(port: server.port, json: Self.valid)
        #expect(response.status == 201)
        let body = try #require(response.json)
        #expect(body["costCents"] as? Int == 1600)
        #expect(body["currency"] as? String == "USD")
        #expect(body["isFavorite"] as? Bool == false)
        let id = try #require(body["id"] as? String)
        #expect(response.headers["location"] == "/api/cupcakes/\(id)")
        let createdAt = try #require(body["createdAt"] as? String)
        #expect(createdAt.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        #expect(response.headers["request-id"] != nil)
    }

    @Test(arguments: Engine.allCases)
    func theOlderEncodingAndTheResetRuleHoldOnTheServer(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let older = try RawHTTP.postOrder(
            port: server.port,
            json:
                #"{"type":0,"quantity":4,"addSprinkles":true,"name":"A","streetAddress":"B","city":"C","zip":"D","costCents":1}"#
        )
        #expect(older.status == 201)
        #expect(older.json?["specialRequestEnabled"] as? Bool == true)
        #expect(older.json?["costCents"] as? Int == 1000)
        let reset = try RawHTTP.postOrder(
            port: server.port,
            json:
                #"{"type":0,"quantity":4,"specialRequestEnabled":false,"extraFrosting":true,"name":"A","streetAddress":"B","city":"C","zip":"D"}"#
        )
        #expect(reset.status == 201)
        #expect(reset.json?["extraFrosting"] as? Bool == false)
        #expect(reset.json?["costCents"] as? Int == 800)
    }

    @Test(arguments: Engine.allCases)
    func getAnswersReqresSingleResourceShape(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let created = try RawHTTP.postOrder(port: server.port, json: Self.valid)
        let id = try #require(created.json?["id"] as? String)
        let fetched = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)")
        #expect(fetched.status == 200)
        let data = try #require(fetched.json?["data"] as? [String: Any])
        #expect(data["id"] as? String == id)
        #expect(data["name"] as? String == "Taylor")
        #expect(data["createdAt"] as? String == created.json?["createdAt"] as? String)
    }

    @Test(arguments: Engine.allCases)
    func anAbsentContentTypeIs415(engine: Engine) throws {
        // A page on another site can send a body without Content-Type and no CORS preflight.
        let server = try TestServer(engine: engine)
        let response = try RawHTTP.request(
            port: server.port, method: "POST", path: "/api/cupcakes", body: Data(Self.valid.utf8),
            jsonContentType: false)
        #expect(response.status == 415)
        #expect(try server.orderCount() == 0)
    }

    @Test(arguments: Engine.allCases)
    func healthzAnswers200(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let response = try RawHTTP.request(port: server.port, method: "GET", path: "/healthz")
        #expect(response.status == 200)
    }

    @Test(arguments: Engine.allCases)
    func readyzAnswers200WhileTheDatabaseTakesOrders(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let response = try RawHTTP.request(port: server.port, method: "GET", path: "/readyz")
        #expect(response.status == 200)
        #expect(response.json?["status"] as? String == "ready")
        #expect(
            try RawHTTP.request(port: server.port, method: "POST", path: "/readyz", body: Data("{}".utf8)).status == 405
        )
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var method = "POST"
        var path = "/api/cupcakes"
        var headers: [String: String] = ["Content-Type": "application/json"]
        var body: String? = nil
        var status: Int
        var detailMentions: String = ""
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(testDescription: "malformed JSON", body: #"{"type": 2,"#, status: 400, detailMentions: "line 1"),
        ErrorCase(testDescription: "not an object", body: "[1,2,3]", status: 400, detailMentions: "array"),
        ErrorCase(testDescription: "empty body", body: "", status: 400, detailMentions: "empty"),
        ErrorCase(testDescription: "unknown path", method: "GET", path: "/nope", body: nil, status: 404),
        ErrorCase(testDescription: "unknown id", method: "GET", path: "/api/cupcakes/999999", body: nil, status: 404),
        ErrorCase(
            testDescription: "id that is not a number", method: "GET", path: "/api/cupcakes/abc", body: nil, status: 404
        ),
        ErrorCase(testDescription: "wrong method", method: "PUT", path: "/api/cupcakes", body: "{}", status: 405),
        ErrorCase(
            testDescription: "wrong method on healthz", method: "POST", path: "/healthz", body: "{}", status: 405),
        ErrorCase(testDescription: "text body", headers: ["Content-Type": "text/plain"], body: valid, status: 415),
        ErrorCase(
            testDescription: "form body", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: "a=b",
            status: 415),
        ErrorCase(
            testDescription: "gzip body", headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"],
            body: valid, status: 415, detailMentions: "gzip"),
        ErrorCase(testDescription: "invalid order", body: #"{"type":7,"quantity":2,"name":" "}"#, status: 422),
        ErrorCase(
            testDescription: "wrongly typed field", body: #"{"type":"two","quantity":3}"#, status: 422,
            detailMentions: ""),
    ]

    @Test(arguments: Engine.allCases, errorCases)
    func errorsAreProblemJSON(engine: Engine, _ c: ErrorCase) throws {
        let server = try TestServer(engine: engine)
        let response = try RawHTTP.request(
            port: server.port, method: c.method, path: c.path, headers: c.headers, body: c.body.map { Data($0.utf8) })
        #expect(response.status == c.status)
        #expect(response.headers["content-type"] == "application/problem+json")
        let problem = try #require(response.json)
        #expect(problem["status"] as? Int == c.status)
        #expect(problem["title"] as? String != nil)
        #expect(problem["type"] as? String == "about:blank")
        let detail = try #require(problem["detail"] as? String)
        if !c.detailMentions.isEmpty {
            #expect(detail.contains(c.detailMentions), "\(detail)")
        }
        if c.status == 405 {
            #expect(response.headers["allow"] != nil)
        }
        #expect(try server.orderCount() == 0)
    }

    /// OPTIONS names exactly the methods a path answers: each one listed is not 405, and a
    /// method left out is.
    @Test(arguments: [
        ("/api/cupcakes", "GET, HEAD, POST, OPTIONS"),
        ("/api/cupcakes/1", "GET, HEAD, PATCH, DELETE, OPTIONS"),
        ("/api/backup", "GET, OPTIONS"),
        ("/metrics", "GET, HEAD, OPTIONS"),
        ("/api/quote", "POST, OPTIONS"),
    ])
    func optionsListsExactlyThePathsMethods(path: String, allow: String) throws {
        let server = try TestServer()
        let options = try RawHTTP.request(port: server.port, method: "OPTIONS", path: path)
        #expect(options.status == 204)
        #expect(options.headers["allow"] == allow)
        let listed = Set(allow.components(separatedBy: ", "))
        for method in ["GET", "HEAD", "POST", "PATCH", "DELETE", "PUT"] {
            let body = method == "POST" || method == "PATCH" ? Data("{}".utf8) : nil
            let answer = try RawHTTP.request(port: server.port, method: method, path: path, body: body)
            #expect((answer.status == 405) == !listed.contains(method), "\(method) \(path): \(answer.status)")
        }
    }

    @Test(arguments: Engine.allCases)
    func unprocessableNamesEveryBadFieldByWireKey(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let response = try RawHTTP.postOrder(
            port: server.port, json: #"{"type":7,"quantity":2,"name":" ","streetAddress":"x","city":"y","zip":"z"}"#)
        #expect(response.status == 422)
        let errors = try #require(response.json?["errors"] as? [[String: String]])
        #expect(errors.compactMap { $0["field"] } == ["type", "quantity", "name"])
        #expect(errors.allSatisfy { !($0["rule"] ?? "").isEmpty })
    }

    /// Invisible text is blank on the server as in the domain, and the quote (what the page
    /// asks) agrees: nothing is stored.
    @Test(arguments: Engine.allCases)
    func invisibleAddressFieldsAreBlankAndOverridesAreRefused(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let body =
            #"{"type":1,"quantity":3,"name":"\u200b","streetAddress":"\u3164","city":"\u2060","zip":"\ufeff"}"#
        let response = try RawHTTP.postOrder(port: server.port, json: body)
        #expect(response.status == 422)
        let errors = try #require(response.json?["errors"] as? [[String: String]])
        #expect(errors.map { $0["field"] } == ["name", "streetAddress", "city", "zip"])
        #expect(errors.allSatisfy { $0["rule"] == "must not be blank" })
        let quote = try RawHTTP.request(port: server.port, method: "POST", path: "/api/quote", body: Data(body.utf8))
        #expect(quote.json?["valid"] as? Bool == false)
        let override = try RawHTTP.postOrder(
            port: server.port, json: HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: #"Tay\u202elor"#))
        #expect(override.status == 422)
        #expect(try server.orderCount() == 0)
    }

    @Test(arguments: Engine.allCases)
    func aBodyOverTheLimitIsRejectedByContentLength(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        // Announce a huge body but send none of it: the answer must come from the headers alone.
        let response = try RawHTTP.exchange(
            port: server.port,
            bytes: Data(
                "POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n"
                    .utf8),
            timeout: 5)
        #expect(response.status == 413)
        #expect(response.json?["status"] as? Int == 413)
    }

    @Test func aChunkedBodyOverTheLimitIsRejectedAsItArrives() throws {
        let server = try TestServer { $0.bodyLimitBytes = 1024 }
        var bytes = Data(
            "POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                .utf8)
        let chunk = String(repeating: " ", count: 800)
        for _ in 0..<3 {
            bytes.append(Data("\(String(chunk.utf8.count, radix: 16))\r\n\(chunk)\r\n".utf8))
        }
        bytes.append(Data("0\r\n\r\n".utf8))
        let response = try RawHTTP.exchange(port: server.port, bytes: bytes, timeout: 5)
        #expect(response.status == 413)
    }
}
