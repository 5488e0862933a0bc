import CupcakeServer
import CupcakeTestSupport
import Foundation
import Testing

/// Request heads of every size from 1 to 64 KiB: each gets a whole answer (2xx, or 431 past the
/// limits), an order is stored exactly when its 201 reached the client, and the access log says
/// what each client got. libmicrohttpd builds an answer in the memory the head left free, and
/// closed without a byte when it did not fit: orders were stored and never answered.
@Suite struct HeadSizeTests {
    enum Kind: String, CaseIterable, Sendable {
        case get, post, keyedPost, pipelined
    }

    /// A request of `kind` whose head (request line and fields) is `size` bytes, padded with
    /// fields of at most 4 KiB (so that the head's size, not one line's, is what is limited).
    static func request(_ kind: Kind, size: Int, number: Int) -> Data {
        let body = HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: "head-\(number)")
        var head: String
        switch kind {
        case .get: head = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n"
        case .post, .pipelined:
            head =
                "POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n"
        case .keyedPost:
            head =
                "POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nIdempotency-Key: head-key-\(number)\r\n"
        }
        var missing = size - head.utf8.count - 2
        var line = 0
        while missing > 0 {
            let prefix = "X-Pad-\(line): "
            let length = min(4096, missing) - prefix.utf8.count - 2
            guard length > 0 else {
                // Too little left for another field: lengthen the previous one... or the first.
                head += "X-Fill: " + String(repeating: "f", count: max(0, missing - 10)) + "\r\n"
                break
            }
            head += prefix + String(repeating: "a", count: length) + "\r\n"
            missing -= prefix.utf8.count + length + 2
            line += 1
        }
        head += "\r\n"
        var data = Data(head.utf8)
        if kind != .get { data.append(Data(body.utf8)) }
        // A request read along with this one must not take the room its answer needs.
        if kind == .pipelined { data.append(Data("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        return data
    }

    struct Outcome: Sendable {
        var kind: Kind
        var size: Int
        var source: String
        var status: Int
        var complete: Bool
    }

    @Test func everyHeadFrom1To64KiBGetsItsWholeAnswerAndOnlyAcknowledgedOrdersAreStored() throws {
        let captured = TextCollector()
        let log = AccessLog(enabled: true, write: captured.add)
        let server = try TestServer(log: log)
        var outcomes: [Outcome] = []
        var number = 0
        for size in stride(from: 1024, through: 64 * 1024, by: 64) {
            for kind in Kind.allCases {
                number += 1
                // A client address of its own, so the access log's line for it can be found.
                let source = "127.\(1 + number / 60_000).\(number / 250 % 240).\(1 + number % 250)"
                let socket = try TestSocket(port: server.port, timeout: 10, from: source)
                try socket.send(Self.request(kind, size: size, number: number))
                let response = socket.receiveResponse(deadline: Date().addingTimeInterval(10))
                outcomes.append(
                    Outcome(
                        kind: kind, size: size, source: source, status: response?.status ?? 0,
                        complete: response != nil))
            }
        }
        server.shutdown()
        log.flush()

        let broken = outcomes.filter { !$0.complete || !(200..<300 ~= $0.status || $0.status == 431) }
        #expect(broken.isEmpty, "\(broken.count) without a whole 2xx or 431, first: \(broken.prefix(5))")
        let created = outcomes.count { $0.status == 201 }
        #expect(try server.orderCount() == created)
        // Small heads are served; past the limit of 16 KiB, all are refused.
        #expect(outcomes.filter { $0.size <= 8 * 1024 }.allSatisfy { (200..<300).contains($0.status) })
        #expect(outcomes.filter { $0.size > 16 * 1024 }.allSatisfy { $0.status == 431 })

        // The access log: one line per request, with the status its client got.
        var logged: [String: String] = [:]
        for line in captured.text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 7, let client = fields.last, client.hasPrefix("client=") else { continue }
            logged[String(client.dropFirst(7)), default: ""] += String(fields[3]) + " "
        }
        let mismatched = outcomes.filter { outcome in
            // The pipelined request behind the first is logged too (or, after a 431, never read).
            let statuses = (logged[outcome.source] ?? "").split(separator: " ")
            return statuses.first.map(String.init) != String(outcome.status)
        }
        #expect(
            mismatched.isEmpty,
            "logged otherwise than answered: \(mismatched.prefix(5).map { "\($0.kind) \($0.size): sent \($0.status), logged \(logged[$0.source] ?? "nothing")" })"
        )
        print(
            "RELIABILITY head sizes: \(outcomes.count) requests with heads of 1-64 KiB (64-byte steps; GET, POST, "
                + "POST with a key, POST with a request behind): all answered in full "
                + "(\(outcomes.count { $0.status == 431 }) with 431), \(created) orders stored for \(created) 201s, "
                + "every status logged as sent")
    }
}
