import CupcakeCheckout
import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake order` in-process against a scripted endpoint whose answers each test chooses.
@Suite struct CheckoutTests {
    static let orderArguments = [
        "order", "--type", "2", "--qty", "5", "--frosting", "--name", "Taylor", "--street", "1 Main St", "--city",
        "Nashville", "--zip", "37201",
    ]

    /// Runs `cupcake order` with a private config directory, against `endpoint`.
    static func order(
        _ endpoint: String, _ extra: [String] = [], environment: [String: String] = [:], stdin: String? = nil
    ) async throws -> (status: Int32, io: TestConsole) {
        let home = try TemporaryDirectory()
        let io = TestConsole(
            stdin: stdin, environment: ["XDG_CONFIG_HOME": home.path("config")].merging(environment) { $1 })
        let status = await io.run(orderArguments + ["--endpoint", endpoint] + extra)
        return (status, io)
    }

    @Test(arguments: [false, true])
    func aReqres201ConfirmsTheOrderWithStringOrNumericIDs(numericIDs: Bool) async throws {
        let endpoint = try ScriptedEndpoint([.echo], numericIDs: numericIDs)
        let (status, io) = try await Self.order(endpoint.endpoint)
        #expect(status == 0, "\(io.stderr)")
        let lines = io.stdout.split(separator: "\n")
        #expect(lines.first == "Your order for 5x chocolate cupcakes is on its way!")
        #expect(lines.count == 2)
        #expect(lines.last?.contains("Order 1") == true)
        #expect(lines.last?.contains("$16.00") == true)
        #expect(lines.last?.contains("2026-12-02T10:00:00.123Z") == true)
        #expect(io.stderr.isEmpty)
    }

    @Test func theRequestCarriesTheHeadersAndTheWireJSON() async throws {
        let endpoint = try ScriptedEndpoint([.echo])
        let (status, _) = try await Self.order(
            endpoint.endpoint, ["--api-key", "reqres-free-v1", "--idempotency-key", "pinned-key"])
        #expect(status == 0)
        let request = try #require(endpoint.requests.first)
        #expect(request.method == "POST")
        #expect(request.header("content-type") == "application/json")
        #expect(request.header("accept") == "application/json")
        #expect(request.header("user-agent") == "cupcake/\(Cupcake.version)")
        #expect(request.header("idempotency-key") == "pinned-key")
        #expect(request.header("x-api-key") == "reqres-free-v1")
        let order = try Order.decode(json: request.body)
        #expect(order.costCents == 1600)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(object.keys.sorted() == Order.CodingKeys.allCases.map(\.rawValue).sorted())
    }

    @Test func withoutAPinnedKeyEachOrderGetsAFreshUUID() async throws {
        let endpoint = try ScriptedEndpoint([.echo])
        _ = try await Self.order(endpoint.endpoint)
        _ = try await Self.order(endpoint.endpoint)
        let keys = endpoint.requests.compactMap { $0.header("idempotency-key") }
        #expect(keys.count == 2)
        #expect(Set(keys).count == 2)
        #expect(keys.allSatisfy { UUID(uuidString: $0) != nil })
    }

    @Test func json201PrintsTheConfirmationJSON() async throws {
        let endpoint = try ScriptedEndpoint([.echo])
        let (status, io) = try await Self.order(endpoint.endpoint, ["--json"])
        #expect(status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(io.stdout.utf8)) as? [String: Any])
        #expect(object["id"] as? String == "1")
        #expect(object["costCents"] as? Int == 1600)
    }

    @Test func reqres401ExitsWithTheServersMessage() async throws {
        let endpoint = try ScriptedEndpoint([
            ScriptedEndpoint.Answer(status: 401, body: #"{"error": "Missing API key."}"#)
        ])
        let (status, io) = try await Self.order(endpoint.endpoint)
        #expect(status == 77)
        #expect(io.stderr.contains("Missing API key."))
        #expect(endpoint.requests.count == 1)
    }

    @Test func a422ProblemExits65WithTheDetail() async throws {
        let problem =
            #"{"type":"about:blank","title":"Unprocessable Content","status":422,"detail":"The order is not valid.","errors":[{"field":"zip","rule":"must not be blank"}]}"#
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 422, body: problem)])
        let (status, io) = try await Self.order(endpoint.endpoint)
        #expect(status == 65)
        #expect(io.stderr.contains("The order is not valid."))
        #expect(io.stderr.contains("zip must not be blank"))
        #expect(endpoint.requests.count == 1)
    }

    @Test func a500Then201IsTwoRequestsWithOneKeyAndOneOrder() async throws {
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 500, body: "{}"), .echo])
        let (status, io) = try await Self.order(endpoint.endpoint)
        #expect(status == 0, "\(io.stderr)")
        #expect(endpoint.requests.count == 2)
        #expect(Set(endpoint.requests.compactMap { $0.header("idempotency-key") }).count == 1)
        #expect(endpoint.created == 1)
    }

    @Test func retryAfterIsHonouredFor429() async throws {
        let endpoint = try ScriptedEndpoint([
            ScriptedEndpoint.Answer(status: 429, body: "{}", headers: [("Retry-After", "0")]), .echo,
        ])
        let (status, _) = try await Self.order(endpoint.endpoint)
        #expect(status == 0)
        #expect(endpoint.requests.count == 2)
    }

    @Test func stillFailingAfterTheRetriesExits75SayingHowManyTries() async throws {
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 503, body: "{}")])
        let (status, io) = try await Self.order(endpoint.endpoint, ["--retries", "1"])
        #expect(status == 75)
        #expect(io.stderr.contains("2 tries"))
        #expect(endpoint.requests.count == 2)
    }

    @Test(arguments: [400, 404, 413])
    func otherClientErrorsAreNeverRetried(status code: Int) async throws {
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: code, body: #"{"detail":"no"}"#)])
        let (status, _) = try await Self.order(endpoint.endpoint)
        #expect(status == (code == 400 ? 65 : 76))
        #expect(endpoint.requests.count == 1)
    }

    @Test func aRefusedPortExits69NamingTheURL() async throws {
        let port = try FreePort.reserve()
        let url = "http://127.0.0.1:\(port)/api/cupcakes"
        let (status, io) = try await Self.order(url, ["--retries", "0"])
        #expect(status == 69)
        #expect(io.stderr.contains(url))
        #expect(io.stderr.split(separator: "\n").count == 1)
    }

    @Test func aSlowAnswerPastTheTimeoutExits75() async throws {
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 201, delay: 4)])
        let (status, io) = try await Self.order(endpoint.endpoint, ["--timeout", "1.5", "--retries", "0"])
        #expect(status == 75)
        // The deadline is our own, in fractions of a second (URLSession's would say 1 or 2 s).
        #expect(io.stderr.contains("did not answer within 1.5 s"))
        #expect(io.stderr.contains("1 try"))
        #expect(endpoint.requests.count == 1)
    }

    @Test func aNonJSON200Exits76() async throws {
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 200, body: "<html>hello</html>")])
        let (status, io) = try await Self.order(endpoint.endpoint)
        #expect(status == 76)
        #expect(io.stderr.contains("not a JSON object"))
    }

    @Test func anAnswerThatDoesNotEchoTheOrderExits76() async throws {
        let endpoint = try ScriptedEndpoint([
            ScriptedEndpoint.Answer(
                status: 201, body: #"{"id":"1","createdAt":"2026-12-02T10:00:00Z","type":0,"quantity":3}"#)
        ])
        let (status, io) = try await Self.order(endpoint.endpoint)
        #expect(status == 76)
        #expect(io.stderr.contains("echo"))
    }

    @Test func anInvalidOrderNeverLeavesTheMachine() async throws {
        let endpoint = try ScriptedEndpoint([.echo])
        let home = try TemporaryDirectory()
        let io = TestConsole(environment: ["XDG_CONFIG_HOME": home.path("config")])
        let status = await io.run(["order", "--qty", "2", "--endpoint", endpoint.endpoint])
        #expect(status == 65)
        #expect(io.stderr.contains("quantity"))
        #expect(io.stderr.contains("name"))
        #expect(endpoint.requests.isEmpty)
    }

    @Test func pipedJSONIsPlaced() async throws {
        let endpoint = try ScriptedEndpoint([.echo])
        let home = try TemporaryDirectory()
        let io = TestConsole(
            stdin: #"{"type":3,"quantity":4,"name":"A","streetAddress":"B","city":"C","zip":"D"}"#,
            environment: ["XDG_CONFIG_HOME": home.path("config")])
        #expect(await io.run(["order", "--endpoint", endpoint.endpoint]) == 0)
        #expect(io.stdout.hasPrefix("Your order for 4x rainbow cupcakes is on its way!"))
    }
}

/// Finds a loopback port nothing listens on.
enum FreePort {
    static func reserve() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

@Suite struct ConfirmationFormatTests {
    @Test(arguments: [
        "2026-12-02T10:00:00Z", "2026-12-02T10:00:00.123Z", "2026-12-02T10:00:00.123456Z", "2026-12-02T11:00:00+01:00",
    ])
    func createdAtWithOrWithoutFractionsIsAccepted(createdAt: String) async throws {
        let sent =
            #"{"type":2,"quantity":5,"specialRequestEnabled":true,"extraFrosting":true,"addSprinkles":false,"name":"Taylor","streetAddress":"1 Main St","city":"Nashville","zip":"37201""#
        let endpoint = try ScriptedEndpoint([
            ScriptedEndpoint.Answer(status: 201, body: sent + #","id":"77","createdAt":"\#(createdAt)"}"#)
        ])
        let (status, io) = try await CheckoutTests.order(endpoint.endpoint)
        #expect(status == 0, "\(io.stderr)")
        #expect(io.stdout.contains("Order 77"))
        #expect(io.stdout.contains(createdAt))
    }

    /// `isFavorite` is believed only as the boolean `true` (`order --json` shows it).
    @Test(arguments: [
        (#","isFavorite":true"#, true), (#","isFavorite":false"#, false), (#","isFavorite":1"#, false),
        (#","isFavorite":"true""#, false), (#","isFavorite":null"#, false), ("", false),
    ])
    func isFavoriteIsReadOnlyAsTrue(field: String, favourite: Bool) throws {
        let sent = Order(
            type: 2, quantity: 5, specialRequestEnabled: true, extraFrosting: true, name: "Taylor",
            streetAddress: "1 Main St", city: "Nashville",
            zip: "37201")
        let answer =
            String(decoding: sent.wireJSON.dropLast(), as: UTF8.self)
            + #","id":"7","createdAt":"2026-12-02T10:00:00.123Z""# + field + "}"
        let confirmation = try Confirmation.decode(Data(answer.utf8), sent: sent)
        #expect(confirmation.isFavorite == favourite)
        #expect(confirmation.id == "7")
    }

    /// Answers the quick reader takes (flat objects) and ones it leaves to JSONSerialization:
    /// both ways give the same confirmation, or the same error.
    static let answers: [(fields: String, flat: Bool)] = [
        (#""id":"7","createdAt":"2026-12-02T10:00:00.123Z""#, true),
        (#""id":42,"createdAt":"2026-12-02T10:00:00Z","costCents":1700,"currency":"EUR""#, true),
        (#""id":-3,"createdAt":"2026-12-02T10:00:00Z","costCents":true,"currency":5"#, true),
        (#""id":true,"createdAt":"2026-12-02T10:00:00Z""#, true),
        (#""id":"","createdAt":"2026-12-02T10:00:00Z""#, true),
        (#""id":null,"createdAt":"2026-12-02T10:00:00Z""#, true),
        (#""id":"7","createdAt":"yesterday""#, true),
        (#""id":"7""#, true),
        (#""id":"7","createdAt":"2026-12-02T10:00:00Z","receiptToken":"rct_abc","isFavorite":true"#, true),
        (#""id":"7","createdAt":"2026-12-02T10:00:00Z","receiptToken":"two words","isFavorite":1"#, true),
        (#""id":"7","createdAt":"2026-12-02T10:00:00Z","receiptToken":7,"costCents":null,"note":"x""#, true),
        (#""id":"7","createdAt":"2026-12-02T10:00:00Z","costCents":12.5"#, false),
        (#""id":"\u0037","createdAt":"2026-12-02T10:00:00Z""#, false),
        (#""id":"7","id":"8","createdAt":"2026-12-02T10:00:00Z""#, false),
        (#""id":"7","createdAt":"2026-12-02T10:00:00Z","extra":{"a":1}"#, false),
        (
            (0..<17).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
                + #","id":"7","createdAt":"2026-12-02T10:00:00Z""#, false
        ),
    ]

    @Test(arguments: answers)
    func theQuickReadingOfAnAnswerAgreesWithTheFullOne(fields: String, flat: Bool) throws {
        let sent = Order(
            type: 2, quantity: 5, specialRequestEnabled: true, extraFrosting: true, name: "Taylor",
            streetAddress: "1 Main St", city: "Nashville", zip: "37201")
        let answer = Data((String(decoding: sent.wireJSON.dropLast(), as: UTF8.self) + "," + fields + "}").utf8)
        #expect((answer.withUnsafeBytes { Order.decodeFlat(json: $0.bindMemory(to: UInt8.self)) } != nil) == flat)
        let quick = Result { () throws(CheckoutError) in try Confirmation.decode(answer, sent: sent, quick: true) }
        let full = Result { () throws(CheckoutError) in try Confirmation.decode(answer, sent: sent, quick: false) }
        #expect(quick == full)
        // And a different order is refused either way.
        var other = sent
        other.quantity = 6
        #expect(throws: CheckoutError.self) { try Confirmation.decode(answer, sent: other, quick: true) }
    }

    /// reqres may wrap the order in "data": read in full, the fields from inside.
    @Test func aWrappedAnswerIsReadInFull() throws {
        let sent = Order(type: 1, quantity: 4, name: "A", streetAddress: "B", city: "C", zip: "D")
        let inner = String(decoding: sent.wireJSON.dropLast(), as: UTF8.self)
        let answer = Data((#"{"data":"# + inner + #","id":"9","createdAt":"2026-12-02T10:00:00Z"}}"#).utf8)
        let confirmation = try Confirmation.decode(answer, sent: sent)
        #expect(confirmation.id == "9")
    }

    @Test func aTerminalShowsPlacingOrderAndPipesShowNothing() throws {
        let server = try TestServer()
        let home = try TemporaryDirectory()
        let command =
            ([ProcessRunner.cupcakeExecutable.path] + CheckoutTests.orderArguments + ["--endpoint", server.endpoint])
            .map { "'\($0)'" }.joined(separator: " ")
        // `script` gives the command a pseudo-terminal, as a person's shell would.
        let onTerminal = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
            environment: ["XDG_CONFIG_HOME": home.path("config")], timeout: 30)
        #expect(onTerminal.status == 0, "\(onTerminal.stdout)")
        #expect(onTerminal.stdout.contains("Placing order…"))
        #expect(onTerminal.stdout.contains("Order placed."))
        #expect(onTerminal.stdout.contains("Your order for 5x chocolate cupcakes is on its way!"))

        let piped = try ProcessRunner.cupcake(
            CheckoutTests.orderArguments + ["--endpoint", server.endpoint],
            environment: ["XDG_CONFIG_HOME": home.path("config")])
        #expect(piped.status == 0)
        #expect(piped.stderr.isEmpty)
        #expect(!piped.stdout.contains("Placing"))
    }
}
