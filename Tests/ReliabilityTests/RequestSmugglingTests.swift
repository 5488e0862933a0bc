import CupcakeTestSupport
import Foundation
import Testing

/// Requests whose body's end is ambiguous (RFC 9112 §6.3). A proxy in front that read the
/// framing the other way would forward the bytes after the body as a second request, so the
/// server must answer 400 and close, never serve those bytes.
@Suite struct RequestSmugglingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let headers: String
        let body: String
        var testDescription: String { name }
    }

    static let smuggled = "GET /api/cupcakes/1 HTTP/1.1\r\nHost: localhost\r\n\r\n"

    static let cases: [Case] = [
        Case(
            name: "two Content-Length values, the smaller first",
            headers: "Content-Length: 2\r\nContent-Length: \(2 + smuggled.utf8.count)\r\n", body: "{}" + smuggled),
        Case(
            name: "two Content-Length values, the larger first",
            headers: "Content-Length: \(2 + smuggled.utf8.count)\r\nContent-Length: 2\r\n", body: "{}" + smuggled),
        Case(
            name: "Content-Length and then chunked",
            headers: "Content-Length: \(5 + smuggled.utf8.count)\r\nTransfer-Encoding: chunked\r\n",
            body: "0\r\n\r\n" + smuggled),
        Case(
            name: "chunked and then Content-Length",
            headers: "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", body: "2\r\n{}\r\n0\r\n\r\n" + smuggled),
        Case(
            name: "two equal Content-Length values",
            headers: "Content-Length: 2\r\nContent-Length: 2\r\n", body: "{}" + smuggled),
    ]

    /// A Transfer-Encoding other than exactly chunked is a coding the server does not implement
    /// (RFC 9112 §6.1: 501), and its body's end cannot be found: 501 and close.
    static let codingCases: [Case] = [
        Case(
            name: "a Transfer-Encoding that does not end in chunked",
            headers: "Transfer-Encoding: chunked, gzip\r\n", body: "2\r\n{}\r\n0\r\n\r\n" + smuggled),
        Case(
            name: "gzip, then chunked", headers: "Transfer-Encoding: gzip, chunked\r\n",
            body: "2\r\n{}\r\n0\r\n\r\n" + smuggled),
        Case(
            name: "chunked with whitespace after it", headers: "Transfer-Encoding: chunked \r\n",
            body: "2\r\n{}\r\n0\r\n\r\n" + smuggled),
    ]

    /// Host is required once in HTTP/1.1 (RFC 9112 §3.2); these carry their own Host lines.
    static let hostCases: [Case] = [
        Case(name: "HTTP/1.1 without Host", headers: "", body: ""),
        Case(name: "two Host headers", headers: "Host: localhost\r\nHost: localhost\r\n", body: ""),
    ]

    @Test(arguments: cases + hostCases + codingCases)
    func anAmbiguousRequestIsRefusedAndTheConnectionCloses(_ item: Case) throws {
        let server = try TestServer()
        let host = Self.hostCases.contains { $0.name == item.name } ? "" : "Host: localhost\r\n"
        let head = "POST /api/cupcakes HTTP/1.1\r\n\(host)Content-Type: application/json\r\n\(item.headers)\r\n"
        let socket = try TestSocket(port: server.port, timeout: 10)
        try socket.send(Data((head + item.body).utf8))
        // The whole exchange, up to the server closing (receiveAll stops at the close, or at the
        // deadline if the connection were kept open).
        let raw = socket.receiveAll(deadline: Date().addingTimeInterval(10))
        let text = String(decoding: raw, as: UTF8.self)
        let response = RawHTTP.parse(raw)
        #expect(response.status == (Self.codingCases.contains { $0.name == item.name } ? 501 : 400))
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(response.headers["connection"]?.lowercased() == "close")
        // Every answer of ours carries one Request-Id.
        #expect(text.components(separatedBy: "\r\nRequest-Id: ").count == 2, "one answer only: \(text)")
        #expect(socket.isClosedByPeer())
        #expect(try server.orderCount() == 0)
    }

    @Test func http10NeedsNoHost() throws {
        let server = try TestServer()
        let response = try RawHTTP.exchange(port: server.port, bytes: Data("GET /healthz HTTP/1.0\r\n\r\n".utf8))
        #expect(response.status == 200)
    }

    @Test func plainChunkedStillWorks() throws {
        let server = try TestServer()
        let order = HostileCorpus.valid
        let length = order.utf8.count
        let chunked = try RawHTTP.exchange(
            port: server.port,
            bytes: Data(
                ("POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "\(String(length, radix: 16))\r\n\(order)\r\n0\r\n\r\n").utf8))
        #expect(chunked.status == 201)
        #expect(try server.orderCount() == 1)
    }
}
