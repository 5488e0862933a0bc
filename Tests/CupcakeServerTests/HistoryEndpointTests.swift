import CupcakeTestSupport
import Foundation
import Testing

/// GET /api/cupcakes, PATCH and DELETE on a real in-process server.
@Suite struct HistoryEndpointTests {
    static func seed(_ server: TestServer, names: [String]) throws -> [String] {
        try names.enumerated().map { index, name in
            let json =
                #"{"type":\#(index % 4),"quantity":\#(3 + index),"name":"\#(name)","streetAddress":"s","city":"c","zip":"z"}"#
            let response = try RawHTTP.postOrder(port: server.port, json: json)
            return try #require(response.json?["id"] as? String)
        }
    }

    static func list(_ server: TestServer, _ query: String) throws -> RawHTTP.Response {
        try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes" + query)
    }

    @Test(arguments: Engine.allCases)
    func theListHasReqresShapeNewestFirst(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let ids = try Self.seed(server, names: ["Ann", "Bob", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"])
        let response = try Self.list(server, "")
        #expect(response.status == 200)
        let body = try #require(response.json)
        #expect(body["page"] as? Int == 1)
        #expect(body["per_page"] as? Int == 6)
        #expect(body["total"] as? Int == 8)
        #expect(body["total_pages"] as? Int == 2)
        let data = try #require(body["data"] as? [[String: Any]])
        #expect(data.compactMap { $0["id"] as? String } == Array(ids.reversed().prefix(6)))
        #expect(data.allSatisfy { $0["isFavorite"] as? Bool == false })
    }

    @Test(arguments: Engine.allCases)
    func filtersCombineAndPatternCharactersAreLiteral(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        _ = try Self.seed(server, names: ["Ann", "anna", "ANDY", "50% off", "5_0", "Bob"])
        let prefix = try #require(try Self.list(server, "?name_prefix=an&sort=name").json)
        #expect((prefix["data"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["ANDY", "Ann", "anna"])
        let percent = try #require(try Self.list(server, "?name_prefix=50%25").json)
        #expect(percent["total"] as? Int == 1)
        let underscore = try #require(try Self.list(server, "?name_prefix=5_").json)
        #expect((underscore["data"] as? [[String: Any]])?.first?["name"] as? String == "5_0")
        let typed = try #require(try Self.list(server, "?type=chocolate").json)
        #expect((typed["data"] as? [[String: Any]])?.allSatisfy { $0["type"] as? Int == 2 } == true)
        let combined = try #require(try Self.list(server, "?name_prefix=a&type=0").json)
        #expect(combined["total"] as? Int == 1)
    }

    @Test(arguments: Engine.allCases)
    func pagingEdges(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        _ = try Self.seed(server, names: (1...7).map { "N\($0)" })
        let last = try #require(try Self.list(server, "?page=2&per_page=4").json)
        #expect((last["data"] as? [Any])?.count == 3)
        #expect(last["total_pages"] as? Int == 2)
        let beyond = try #require(try Self.list(server, "?page=9").json)
        #expect((beyond["data"] as? [Any])?.isEmpty == true)
        #expect(beyond["total"] as? Int == 7)
        let most = try #require(try Self.list(server, "?per_page=100").json)
        #expect((most["data"] as? [Any])?.count == 7)
        #expect(most["next_cursor"] is NSNull)
        // Past the largest page size is a 400 naming it (the OpenAPI contract says 100 at most).
        let tooMany = try Self.list(server, "?per_page=1000")
        #expect(tooMany.status == 400)
        #expect((tooMany.json?["detail"] as? String)?.contains("at most 100") == true)
    }

    @Test(
        arguments: Engine.allCases,
        [
            "?sort=price", "?sort=--name", "?page=0", "?page=abc", "?per_page=-1", "?type=mint", "?favorite=yes",
            "?favorite=", "?sort=", "?type=",
        ])
    func badParametersAre400(engine: Engine, query: String) throws {
        let server = try TestServer(engine: engine)
        let response = try Self.list(server, query)
        #expect(response.status == 400)
        #expect(response.headers["content-type"] == "application/problem+json")
    }

    @Test(arguments: Engine.allCases)
    func patchTogglesTheFavouriteAndTheFilterSeesIt(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let ids = try Self.seed(server, names: ["Ann", "Bob", "Cy"])
        let on = try RawHTTP.request(
            port: server.port, method: "PATCH", path: "/api/cupcakes/\(ids[1])",
            headers: ["Content-Type": "application/json"],
            body: Data(#"{"isFavorite": true}"#.utf8))
        #expect(on.status == 200)
        #expect((on.json?["data"] as? [String: Any])?["isFavorite"] as? Bool == true)
        let favorites = try #require(try Self.list(server, "?favorite=true").json)
        #expect((favorites["data"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[1]])
        let others = try #require(try Self.list(server, "?favorite=false").json)
        #expect(others["total"] as? Int == 2)
        let off = try RawHTTP.request(
            port: server.port, method: "PATCH", path: "/api/cupcakes/\(ids[1])",
            body: Data(#"{"isFavorite": false}"#.utf8))
        #expect((off.json?["data"] as? [String: Any])?["isFavorite"] as? Bool == false)
    }

    @Test(arguments: Engine.allCases, [#"{"isFavorite": "yes"}"#, #"{}"#, #"{"isFavorite": true, "quantity": 9}"#])
    func aBadPatchIs422(engine: Engine, body: String) throws {
        let server = try TestServer(engine: engine)
        let ids = try Self.seed(server, names: ["Ann"])
        let response = try RawHTTP.request(
            port: server.port, method: "PATCH", path: "/api/cupcakes/\(ids[0])", body: Data(body.utf8))
        #expect(response.status == 422)
        #expect((response.json?["errors"] as? [Any])?.isEmpty == false)
    }

    @Test(arguments: Engine.allCases)
    func deleteCancelsTheOrderAndKeepsIt(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let ids = try Self.seed(server, names: ["Ann", "Bob"])
        let deleted = try RawHTTP.request(port: server.port, method: "DELETE", path: "/api/cupcakes/\(ids[0])")
        #expect(deleted.status == 204)
        #expect(deleted.body.isEmpty)
        let kept = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(ids[0])")
        #expect((kept.json?["data"] as? [String: Any])?["status"] as? String == "cancelled")
        // Cancelling again is done already.
        #expect(try RawHTTP.request(port: server.port, method: "DELETE", path: "/api/cupcakes/\(ids[0])").status == 204)
        #expect(try RawHTTP.request(port: server.port, method: "DELETE", path: "/api/cupcakes/999").status == 404)
        let list = try #require(try Self.list(server, "").json)
        #expect(list["total"] as? Int == 1)
        #expect((list["data"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[1]])
        let cancelled = try #require(try Self.list(server, "?status=cancelled").json)
        #expect((cancelled["data"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[0]])
    }

    @Test(arguments: Engine.allCases)
    func anItemAnswers405WithAllowForOtherMethods(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let response = try RawHTTP.request(
            port: server.port, method: "PUT", path: "/api/cupcakes/1", body: Data("{}".utf8))
        #expect(response.status == 405)
        #expect(response.headers["allow"] == "GET, HEAD, PATCH, DELETE")
    }

    /// HEAD is GET without the body (RFC 9110: every general-purpose server supports both).
    @Test(arguments: Engine.allCases, ["/api/cupcakes/1", "/api/cupcakes?per_page=1", "/api/cupcakes/999"])
    func headAnswersLikeGetWithoutTheBody(engine: Engine, path: String) throws {
        let server = try TestServer(engine: engine)
        let created = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid)
        #expect(created.status == 201)
        let get = try RawHTTP.request(port: server.port, method: "GET", path: path)
        let head = try RawHTTP.request(port: server.port, method: "HEAD", path: path)
        #expect(head.status == get.status)
        #expect(head.headers["content-type"] == get.headers["content-type"])
        #expect(head.headers["content-length"] == String(get.body.count))
        #expect(head.body.isEmpty)
    }
}
