import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

/// The storefront's files and its quote, through a real server (the page itself is driven in
/// Chromium by Tests/browser).
@Suite struct StorefrontTests {
    static let files: [(path: String, type: String)] = [
        ("/", "text/html; charset=utf-8"), ("/assets/app.js", "text/javascript; charset=utf-8"),
        ("/assets/app.css", "text/css; charset=utf-8"), ("/assets/cupcake.svg", "image/svg+xml"),
    ]

    @Test func everyFileIsServedWithoutAKeyUnderThePolicyAndRevalidatedByItsETag() throws {
        let server = try TestServer {
            $0.apiKey = "app-key-7f3e"; $0.staffKey = "staff-key-c21a"
        }
        for file in Self.files {
            let response = try RawHTTP.request(port: server.port, method: "GET", path: file.path)
            #expect(response.status == 200, "\(file.path)")
            #expect(response.headers["content-type"] == file.type)
            #expect(response.headers["x-content-type-options"] == "nosniff")
            let policy = try #require(response.headers["content-security-policy"])
            #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"))
            #expect(!policy.contains("unsafe"))
            #expect(response.body.count > 100)
            let etag = try #require(response.headers["etag"])
            let again = try RawHTTP.request(
                port: server.port, method: "GET", path: file.path, headers: ["If-None-Match": etag])
            #expect(again.status == 304, "\(file.path)")
            #expect(again.body.isEmpty)
            let stale = try RawHTTP.request(
                port: server.port, method: "GET", path: file.path, headers: ["If-None-Match": "\"0000\""])
            #expect(stale.status == 200)
            let head = try RawHTTP.request(port: server.port, method: "HEAD", path: file.path)
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(try RawHTTP.request(port: server.port, method: "POST", path: file.path).status == 405)
        }
        // The page is revalidated every time (it names the other files); the others are cached.
        let page = try RawHTTP.request(port: server.port, method: "GET", path: "/")
        #expect(page.headers["cache-control"] == "no-cache")
        #expect(!page.text.contains("app-key-7f3e") && !page.text.contains("staff-key-c21a"), "no key in the page")
        let script = try RawHTTP.request(port: server.port, method: "GET", path: "/assets/app.js")
        #expect(script.headers["cache-control"]?.contains("max-age=") == true)
    }

    struct QuoteCase: Sendable, CustomTestStringConvertible {
        var body: String
        var total: String?
        var lines: Int
        var errorFields: [String]
        var testDescription: String { body }
    }

    @Test(arguments: [
        QuoteCase(
            body: #"{"type":2,"quantity":5,"specialRequestEnabled":true,"extraFrosting":true}"#, total: "$16.00",
            lines: 3, errorFields: ["name", "streetAddress", "city", "zip"]),
        QuoteCase(
            body:
                #"{"type":0,"quantity":3,"name":"Ann","streetAddress":"1 Elm","city":"Austin","zip":"73301"}"#,
            total: "$6.00", lines: 1, errorFields: []),
        // The reset rule: extras without special requests are not charged.
        QuoteCase(
            body: #"{"type":1,"quantity":4,"specialRequestEnabled":false,"extraFrosting":true,"addSprinkles":true}"#,
            total: "$8.50", lines: 2, errorFields: ["name", "streetAddress", "city", "zip"]),
        // No price for a quantity out of range, and the rule says why.
        QuoteCase(
            body: #"{"type":2,"quantity":25,"name":"Ann","streetAddress":"1 Elm","city":"Austin","zip":"73301"}"#,
            total: nil, lines: 0, errorFields: ["quantity"]),
        QuoteCase(
            body: #"{"type":7,"quantity":3,"name":"  ","streetAddress":"1 Elm","city":"Austin","zip":"73301"}"#,
            total: nil, lines: 0, errorFields: ["type", "name"]),
    ])
    func aQuoteIsTheDomainsPriceAndRulesAndStoresNothing(_ c: QuoteCase) throws {
        let server = try TestServer {
            $0.apiKey = "app"; $0.staffKey = "staff"
        }
        let response = try RawHTTP.request(
            port: server.port, method: "POST", path: "/api/quote", body: Data(c.body.utf8))
        #expect(response.status == 200, "no key needed: \(response.text)")
        #expect(response.headers["cache-control"] == "no-store")
        let json = try #require(response.json)
        #expect(json["total"] as? String == c.total)
        #expect((json["lineItems"] as? [Any])?.count == c.lines)
        #expect(((json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String } == c.errorFields)
        #expect(json["valid"] as? Bool == c.errorFields.isEmpty)
        // The same numbers as the Swift that prices a placed order.
        let order = try Order.decode(json: Data(c.body.utf8))
        if let price = try? order.price() {
            #expect(json["costCents"] as? Int == price.totalCents)
            #expect(json["costCents"] as? Int == order.costCents)
        } else {
            #expect(json["costCents"] is NSNull)
        }
        #expect(try server.orderCount() == 0)
    }

    @Test(arguments: [
        ("not json", 400), (#"[1]"#, 400), (#"{"quantity":3}"#, 422), (#"{"type":"x","quantity":3}"#, 422),
    ])
    func aBodyThatIsNotAnOrderIsAProblem(body: String, status: Int) throws {
        let server = try TestServer()
        let response = try RawHTTP.request(port: server.port, method: "POST", path: "/api/quote", body: Data(body.utf8))
        #expect(response.status == status)
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/api/quote").status == 405)
    }

    @Test func aPlacedOrdersAnswerCarriesTheAppsSentenceAndSoDoesItsReplay() throws {
        let server = try TestServer()
        let body = #"{"type":2,"quantity":5,"name":"Ann","streetAddress":"1 Elm","city":"Austin","zip":"73301"}"#
        let first = try RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": "s-1"])
        #expect(first.json?["message"] as? String == "Your order for 5x chocolate cupcakes is on its way!")
        let replay = try RawHTTP.postOrder(port: server.port, json: body, headers: ["Idempotency-Key": "s-1"])
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(replay.json?["message"] as? String == "Your order for 5x chocolate cupcakes is on its way!")
    }
}
