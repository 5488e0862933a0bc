import CupcakeTestSupport
import Foundation
import Testing

/// Malformed and ambiguous requests (RFC 9112's framing: field syntax, Content-Length,
/// Transfer-Encoding, versions, Host, line ends, NUL and CR, chunked bodies, the request line),
/// each with a request pipelined behind it, sent to `cupcake serve` and to nginx from Debian's
/// packages as the reference. cupcake never answers 2xx to a request nginx refuses, never serves
/// a request smuggled inside another's body unless nginx does too, and answers or closes each one
/// at once, without waiting for the client to close.
@Suite struct FramingCorpusTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: Data
        var testDescription: String { name }
    }

    static let order = HostileCorpus.valid
    /// Behind a request whose body's end is in question: served only if that end was misread.
    static let smuggled = "GET /smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n"
    /// Behind a request whose end is clear: a plain next request.
    static let next = "GET /healthz?next HTTP/1.1\r\nHost: localhost\r\n\r\n"

    static func post(
        _ extra: String = "", body: String = order, length: Bool = true, version: String = "HTTP/1.1",
        host: String = "Host: localhost\r\n"
    ) -> String {
        var head = "POST /api/cupcakes \(version)\r\n\(host)Content-Type: application/json\r\n"
        if length { head += "Content-Length: \(body.utf8.count)\r\n" }
        return head + extra + "\r\n" + body
    }

    static func chunked(_ body: String, trailer: String = "") -> String {
        String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n" + trailer + "\r\n"
    }

    static func chunkedPost(_ body: String, extra: String = "") -> String {
        post("Transfer-Encoding: chunked\r\n" + extra, body: body, length: false)
    }

    static func get(_ fields: String, target: String = "/healthz", version: String = "HTTP/1.1") -> String {
        "GET \(target) \(version)\r\n\(fields)\r\n"
    }

    static let cases: [Case] = {
        var cases: [Case] = []
        func add(_ name: String, _ text: String) { cases.append(Case(name: name, bytes: Data(text.utf8))) }
        func add(_ name: String, bytes: [UInt8]) { cases.append(Case(name: name, bytes: Data(bytes))) }
        let length = order.utf8.count
        let hex = String(length, radix: 16)

        // Whitespace between a field name and its colon (RFC 9112 §5.1).
        add("Content-Length, space before the colon", post("Content-Length : \(length)\r\n", length: false) + smuggled)
        add("Content-Length, tab before the colon", post("Content-Length\t: \(length)\r\n", length: false) + smuggled)
        add(
            "Transfer-Encoding, space before the colon",
            post("Transfer-Encoding : chunked\r\n", body: chunked(order), length: false) + smuggled)
        add("Host, space before the colon", get("Host : localhost\r\n") + next)
        add("another field, space before the colon", get("Host: localhost\r\nX-A : b\r\n") + next)
        add("a field line starting with a space", get("Host: localhost\r\n X-A: b\r\n") + next)

        // Transfer-Encoding (§6.1): exactly chunked, or 501.
        for coding in [
            "gzip, chunked", "identity, chunked", "chunked, chunked", "chunked, gzip", "Chunked", "CHUNKED",
            "chunked ", " chunked", "chunked;x=1", "xchunked", "chunked\u{0B}", "", "identity", "gzip", "chunked,",
            ",chunked", "\"chunked\"",
        ] {
            add(
                "Transfer-Encoding '\(coding)'",
                post("Transfer-Encoding: \(coding)\r\n", body: chunked(order), length: false) + smuggled)
        }
        add(
            "two Transfer-Encoding lines, chunked twice",
            post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", body: chunked(order), length: false)
                + smuggled)
        add(
            "two Transfer-Encoding lines, gzip then chunked",
            post("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", body: chunked(order), length: false)
                + smuggled)
        add(
            "Transfer-Encoding in HTTP/1.0",
            post("Transfer-Encoding: chunked\r\n", body: chunked(order), length: false, version: "HTTP/1.0") + smuggled)
        add(
            "Transfer-Encoding and Content-Length",
            post("Transfer-Encoding: chunked\r\n", body: chunked(order)) + smuggled)

        // Content-Length (§6.2, §6.3).
        for value in [
            "18446744073709551615", "18446744073709551616", "99999999999999999999999", "9223372036854775807", "-1",
            "+\(length)", " \(length) ", "\(length) \(length)", "\(length),\(length)", "0x\(hex)", "\(length)a", "",
            "00\(length)", "\(length).0", "1e3",
        ] {
            add("Content-Length '\(value)'", post("Content-Length: \(value)\r\n", length: false) + smuggled)
        }
        add("Content-Length twice, equal", post("Content-Length: \(length)\r\n") + smuggled)
        add("Content-Length twice, different", post("Content-Length: \(length + 1)\r\n") + smuggled)
        add("Content-Length in HTTP/1.0", post(version: "HTTP/1.0") + next)

        // Versions (§2.3) and Host (§3.2).
        for version in [
            "HTTP/1.2", "HTTP/2.0", "HTTP/0.9", "HTTP/1.10", "http/1.1", "HTTP/3.0", "HTTP/1.1 ", "HTTP/11",
        ] {
            add("version '\(version)'", get("Host: localhost\r\n", version: version) + next)
            add("version '\(version)' without Host", get("", version: version) + next)
        }
        add("HTTP/1.1 GET without Host", get("") + next)
        add("HTTP/1.1 POST without Host", post(host: "") + smuggled)
        add("HTTP/1.0 without Host", get("", version: "HTTP/1.0"))
        add("two Host fields", get("Host: a\r\nHost: b\r\n") + next)
        add("an empty Host", get("Host:\r\n") + next)
        add("a Host with a space", get("Host: local host\r\n") + next)
        add("a Host with a slash", get("Host: a/b\r\n") + next)

        // obs-fold (§5.2), line ends (§2.2), NUL and CR (RFC 9110 §5.5).
        add("obs-fold in another field", get("Host: localhost\r\nX-A: b\r\n c\r\n") + next)
        add("obs-fold with a tab", get("Host: localhost\r\nX-A: b\r\n\tc\r\n") + next)
        add("obs-fold in Content-Length", post("Content-Length:\r\n \(length)\r\n", length: false) + smuggled)
        add(
            "obs-fold in Transfer-Encoding",
            post("Transfer-Encoding:\r\n chunked\r\n", body: chunked(order), length: false) + smuggled)
        add("obs-fold in Host", get("Host:\r\n localhost\r\n") + next)
        add("bare LF line ends", "GET /healthz HTTP/1.1\nHost: localhost\n\n" + next)
        add("a bare LF in one line end", "GET /healthz HTTP/1.1\r\nHost: localhost\nX-A: b\r\n\r\n" + next)
        add("a bare CR in a value", get("Host: localhost\r\nX-A: b\rc\r\n") + next)
        add("bare CR line ends", "GET /healthz HTTP/1.1\rHost: localhost\r\r" + next)
        add("a bare CR after Content-Length", post("Content-Length: \(length)\rX: 1\r\n", length: false) + smuggled)
        add("NUL in a value", get("Host: localhost\r\nX-A: b\0c\r\n") + next)
        add("NUL in a name", get("Host: localhost\r\nX\0A: b\r\n") + next)
        add("NUL in Content-Length", post("Content-Length: \(length)\09\r\n", length: false) + smuggled)
        add("NUL in the target", "GET /healthz\0x HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("NUL in the method", "GE\0T /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("NUL in Host", get("Host: local\0host\r\n") + next)
        add("DEL in a value", get("Host: localhost\r\nX-A: b\u{7F}c\r\n") + next)
        add("a C0 control in a value", get("Host: localhost\r\nX-A: b\u{01}c\r\n") + next)
        add(
            "obs-text in a value",
            bytes: Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-A: b".utf8) + [0xE9]
                + Array("c\r\n\r\n\(next)".utf8))
        add("an empty field name", get("Host: localhost\r\n: b\r\n") + next)
        add("a field name with @", get("Host: localhost\r\nX@A: b\r\n") + next)
        add("a field name with a slash", get("Host: localhost\r\nX/A: b\r\n") + next)
        add("a non-ASCII field name", get("Host: localhost\r\nXé: b\r\n") + next)
        add("a field line without a colon", get("Host: localhost\r\nXA b\r\n") + next)

        // Chunked bodies (§7.1).
        add("chunked, plain", chunkedPost(chunked(order)) + next)
        add("chunked, a size past 64 bits", chunkedPost("ffffffffffffffffff\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, a size of 2^64", chunkedPost("10000000000000000\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, an extension", chunkedPost("\(hex);a=b\r\n\(order)\r\n0\r\n\r\n") + next)
        add("chunked, an extension after a space", chunkedPost("\(hex) ; a=b\r\n\(order)\r\n0\r\n\r\n") + next)
        add("chunked, a quoted extension", chunkedPost("\(hex);a=\"b\"\r\n\(order)\r\n0\r\n\r\n") + next)
        add("chunked, a negative size", chunkedPost("-\(hex)\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, a 0x size", chunkedPost("0x\(hex)\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, a space before the size", chunkedPost(" \(hex)\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, a space after the size", chunkedPost("\(hex) \r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, LF line ends", chunkedPost("\(hex)\n\(order)\n0\n\n") + next)
        add(
            "chunked, data longer than its size",
            chunkedPost(String(length - 5, radix: 16) + "\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add(
            "chunked, data shorter than its size",
            chunkedPost(String(length + 5, radix: 16) + "\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, no CRLF after the data", chunkedPost("\(hex)\r\n\(order)0\r\n\r\n") + smuggled)
        add("chunked, a trailer", chunkedPost(chunked(order, trailer: "X-T: 1\r\n")) + next)
        add(
            "chunked, Content-Length in the trailer",
            chunkedPost(chunked(order, trailer: "Content-Length: 5\r\n")) + next)
        add(
            "chunked, Transfer-Encoding in the trailer",
            chunkedPost(chunked(order, trailer: "Transfer-Encoding: chunked\r\n")) + next)
        let head = String(order.prefix(5))
        let rest = String(order.dropFirst(5))
        add(
            "chunked, in two chunks",
            chunkedPost("5\r\n\(head)\r\n" + String(length - 5, radix: 16) + "\r\n\(rest)\r\n0\r\n\r\n") + next)
        add(
            "chunked, an upper-case size",
            chunkedPost(String(length, radix: 16, uppercase: true) + "\r\n\(order)\r\n0\r\n\r\n") + next)
        add(
            "chunked, leading zeros in the size",
            chunkedPost("0000000000000000000\(hex)\r\n\(order)\r\n0\r\n\r\n") + next)
        add("chunked, no last chunk", chunkedPost("\(hex)\r\n\(order)\r\n") + smuggled)
        add("chunked, NUL after the size", chunkedPost("\(hex)\0\r\n\(order)\r\n0\r\n\r\n") + smuggled)
        add("chunked, obs-fold in the trailer", chunkedPost(chunked(order, trailer: "X-T: 1\r\n 2\r\n")) + next)

        // The request line (§3).
        add("two spaces after the method", "GET  /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("a tab after the method", "GET\t/healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("no version", "GET /healthz\r\nHost: localhost\r\n\r\n" + next)
        add("no target", "GET HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("absolute form", get("Host: localhost\r\n", target: "http://localhost/healthz") + next)
        add("asterisk form with GET", get("Host: localhost\r\n", target: "*") + next)
        add("OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("a lower-case method", "get /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("an unknown method", "BREW /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" + next)
        add("a space in the target", get("Host: localhost\r\n", target: "/heal thz") + next)
        add("an empty line first", "\r\n" + get("Host: localhost\r\n") + next)
        add("spaces before the method", "  " + get("Host: localhost\r\n") + next)
        add("a fragment in the target", get("Host: localhost\r\n", target: "/healthz#x") + next)
        add("a control character in the target", get("Host: localhost\r\n", target: "/heal\u{01}thz") + next)
        add("DEL in the target", get("Host: localhost\r\n", target: "/heal\u{7F}thz") + next)
        add(
            "a high byte in the target",
            bytes: Array("GET /heal".utf8) + [0xFF] + Array("thz HTTP/1.1\r\nHost: localhost\r\n\r\n\(next)".utf8))
        add("%00 in the target", get("Host: localhost\r\n", target: "/healthz%00") + next)
        add(
            "200 query arguments",
            get("Host: localhost\r\n", target: "/healthz?" + Array(repeating: "a=1", count: 200).joined(separator: "&"))
                + next)
        add(
            "HEAD with a body",
            "HEAD /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)"
                + next)
        add(
            "GET with a body",
            "GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)"
                + next)
        add(
            "GET with a chunked body",
            get("Host: localhost\r\nTransfer-Encoding: chunked\r\n") + chunked(smuggled) + next)
        add("Expect: 100-continue", post("Expect: 100-continue\r\n") + next)
        add("an unknown Expect", post("Expect: 200-ok\r\n") + next)
        add("Connection: close, then more", post("Connection: close\r\n") + smuggled)
        add("HTTP/1.0 keep-alive", "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + next)
        add("HTTP/1.0, then more", "GET /healthz HTTP/1.0\r\n\r\n" + smuggled)
        add(
            "an h2c upgrade",
            get(
                "Host: localhost\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"
            )
                + next)
        add("the HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        add("a plain GET, pipelined", get("Host: localhost\r\n") + next)
        add("a plain POST, pipelined", post() + next)
        add("a POST with Content-Length 0", post("Content-Length: 0\r\n", body: "", length: false) + next)
        add(
            "a long method", String(repeating: "G", count: 300) + " /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" + next
        )
        return cases
    }()

    /// What came back: the status lines in order, whether the peer closed, whether anything at
    /// all (an answer or a close) came within the deadline.
    struct Exchange: Sendable {
        var statuses: [Int]
        var text: String
        var closed: Bool
    }

    /// Sends `bytes` and reads until the peer closes, or for `quiet` seconds after the last byte
    /// (once something came), or until `deadline` seconds pass with nothing.
    static func exchange(port: Int, bytes: Data, deadline: Double = 3, quiet: Double = 0.5) throws -> Exchange {
        let socket = try TestSocket(port: port, timeout: deadline)
        try? socket.send(bytes)
        var data = Data()
        var closed = false
        let end = Date().addingTimeInterval(deadline)
        var lastByte: Date?
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < end {
            if let lastByte, Date().timeIntervalSince(lastByte) > quiet { break }
            var ready = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let count = recv(socket.descriptor, &buffer, buffer.count, 0)
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
                lastByte = Date()
            } else {
                closed = true
                break
            }
        }
        let text = String(decoding: data, as: UTF8.self)
        var statuses: [Int] = []
        var rest = text[...]
        while let range = rest.range(of: "HTTP/1.1 ") ?? rest.range(of: "HTTP/1.0 ") {
            if let status = Int(rest[range.upperBound...].prefix(3)) { statuses.append(status) }
            rest = rest[range.upperBound...]
        }
        return Exchange(statuses: statuses, text: text, closed: closed)
    }

    @Test func cupcakeNeverAcceptsWhatNginxRefusesNorServesWhatIsSmuggled() throws {
        #expect(Self.cases.count >= 100)
        let nginx = try NginxProcess.origin()
        let server = try TestServer()
        let results = Parallel.run(Self.cases.count, timeout: 120) { index -> (Exchange, Exchange)? in
            let item = Self.cases[index]
            guard let ours = try? Self.exchange(port: server.port, bytes: item.bytes),
                let reference = try? Self.exchange(port: nginx.port, bytes: item.bytes)
            else { return nil }
            return (ours, reference)
        }.map { $0 ?? nil }
        var findings: [String] = []
        for (item, result) in zip(Self.cases, results) {
            guard let (ours, reference) = result else {
                findings.append("\(item.name): no exchange")
                continue
            }
            let accepted = ours.statuses.first.map { (200..<300).contains($0) } ?? false
            let referenceAccepted = reference.statuses.first.map { (200..<300).contains($0) } ?? false
            if accepted && !referenceAccepted {
                findings.append("\(item.name): \(ours.statuses) where nginx refused (\(reference.statuses))")
            }
            if ours.text.contains("/smuggled") && !reference.text.contains("/smuggled") {
                findings.append("\(item.name): served the request smuggled behind it (\(ours.statuses))")
            }
            if ours.statuses.isEmpty && !ours.closed {
                findings.append("\(item.name): neither answered nor closed within 3 s")
            }
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
        let refused = results.count { result in (result?.0.statuses.first).map { $0 >= 400 } ?? true }
        print(
            "RELIABILITY framing: \(Self.cases.count) malformed or ambiguous requests, each with a request behind it, to "
                + "cupcake serve and nginx \(Self.nginxVersion): cupcake refused \(refused), answered 2xx to none nginx "
                + "refused, served nothing smuggled, and answered or closed each at once")
    }

    static var nginxVersion: String {
        let result = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/sbin/nginx"), ["-v"])
        return result?.stderr.split(separator: "/").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            ?? ""
    }
}
