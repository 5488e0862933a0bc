import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake orders …` in-process against a real server, and against a scripted one for answers
/// with missing fields.
@Suite struct OrdersCommandTests {
    static func run(_ arguments: [String], endpoint: String) async throws -> (Int32, TestConsole) {
        let home = try TemporaryDirectory()
        let io = TestConsole(environment: ["XDG_CONFIG_HOME": home.path("config"), "CUPCAKE_ENDPOINT": endpoint])
        let status = await io.run(arguments)
        return (status, io)
    }

    static func seed(_ server: TestServer, _ names: [String]) async throws {
        for (index, name) in names.enumerated() {
            let (status, io) = try await run(
                [
                    "order", "--type", String(index % 4), "--qty", String(3 + index), "--name", name, "--street", "s",
                    "--city", "c", "--zip", "z",
                ],
                endpoint: server.endpoint)
            #expect(status == 0, "\(io.stderr)")
        }
    }

    @Test func listPrintsAnAlignedTableAndThePage() async throws {
        let server = try TestServer()
        try await Self.seed(server, ["Ann", "Bob", "anna", "Cy"])
        _ = try await Self.run(["orders", "favorite", "2"], endpoint: server.endpoint)
        let (status, io) = try await Self.run(["orders", "list"], endpoint: server.endpoint)
        #expect(status == 0, "\(io.stderr)")
        let lines = io.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ID  PLACED") == true)
        #expect(lines.count == 6)
        #expect(lines.last == "page 1 of 1 (4 orders)")
        #expect(lines[1].hasPrefix("4 "))
        #expect(lines[1].contains("Cy"))
        #expect(lines[1].contains("6 × rainbow"))
        #expect(lines[3].hasSuffix("★"))
        // Columns line up: every row's TOTAL ends at the same character.
        let ends = lines[1...4].compactMap { line in
            line.firstMatch(of: /\$[0-9,]+\.[0-9][0-9]/).map {
                line.distance(from: line.startIndex, to: $0.range.upperBound)
            }
        }
        #expect(ends.count == 4)
        #expect(Set(ends).count == 1)
    }

    @Test func namePrefixListsExactlyTheMatchingOrders() async throws {
        let server = try TestServer()
        try await Self.seed(server, ["Ann", "Bob", "anna", "Andy", "Cy"])
        let (status, io) = try await Self.run(
            ["orders", "list", "--name-prefix", "a", "--sort", "name"], endpoint: server.endpoint)
        #expect(status == 0)
        let names = io.stdout.split(separator: "\n").dropFirst().dropLast().map {
            $0.split(separator: " ", omittingEmptySubsequences: true)[4]
        }
        #expect(names == ["Andy", "Ann", "anna"])
    }

    /// Times are local with their offset (the process's TZ decides, as the C library reads it:
    /// so the built client runs here), and a page past the end says so.
    @Test func timesShowTheirZoneAndAPagePastTheEndIsAnError() async throws {
        let server = try TestServer()
        try await Self.seed(server, ["Ann"])
        let home = try TemporaryDirectory()
        let places = ["XDG_CONFIG_HOME": home.path("config"), "XDG_DATA_HOME": home.path("data")]
        for (zone, offset) in [
            ("UTC", "+00:00"), ("Asia/Kolkata", "+05:30"), (":America/Sao_Paulo", "-03:00"), ("EST5", "-05:00"),
        ] {
            let result = try ProcessRunner.cupcake(
                ["orders", "list", "--endpoint", server.endpoint], environment: places.merging(["TZ": zone]) { $1 })
            #expect(result.status == 0, "\(result.stderr)")
            let row = try #require(result.stdout.split(separator: "\n").dropFirst().first)
            #expect(row.contains(" \(offset) "), "\(zone): \(row)")
        }
        let io = TestConsole(environment: places)
        #expect(await io.run(["orders", "list", "--page", "99", "--endpoint", server.endpoint]) == 64)
        #expect(io.stderr.contains("There is no page 99: the list has 1 page (1 order)."), "\(io.stderr)")
    }

    @Test func jsonPrintsTheEndpointsListShape() async throws {
        let server = try TestServer()
        try await Self.seed(server, ["Ann", "Bob"])
        let (status, io) = try await Self.run(
            ["orders", "list", "--json", "--per-page", "1"], endpoint: server.endpoint)
        #expect(status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(io.stdout.utf8)) as? [String: Any])
        #expect(object["total"] as? Int == 2)
        #expect(object["total_pages"] as? Int == 2)
        #expect((object["data"] as? [Any])?.count == 1)
    }

    @Test func favouriteOffAndCancel() async throws {
        let server = try TestServer()
        try await Self.seed(server, ["Ann", "Bob"])
        #expect(try await Self.run(["orders", "favorite", "1"], endpoint: server.endpoint).0 == 0)
        let favourites = try await Self.run(["orders", "list", "--favorites"], endpoint: server.endpoint).1
        #expect(favourites.stdout.contains("(1 order)"))
        #expect(try await Self.run(["orders", "favorite", "1", "--off"], endpoint: server.endpoint).0 == 0)
        #expect(
            try await Self.run(["orders", "list", "--favorites"], endpoint: server.endpoint).1.stdout.contains(
                "No orders."))
        // Asked first on a terminal: "n" (or Enter) keeps it, "y" cancels it.
        let home = try TemporaryDirectory()
        let places = ["XDG_CONFIG_HOME": home.path("config"), "CUPCAKE_ENDPOINT": server.endpoint]
        let kept = TestConsole(typing: [""], environment: places)
        #expect(await kept.run(["orders", "cancel", "1"]) == 0)
        #expect(kept.stderr.contains("Cancel order 1? This cannot be undone. [y/N]"))
        #expect(kept.stderr.contains("Order 1 was not cancelled."))
        #expect(try await Self.run(["orders", "show", "1"], endpoint: server.endpoint).0 == 0)
        // Without a terminal it needs --yes.
        let piped = TestConsole(stdin: "", environment: places)
        #expect(await piped.run(["orders", "cancel", "1"]) == 64)
        #expect(piped.stderr.contains("add --yes"))
        let io = TestConsole(typing: ["y"], environment: places)
        #expect(await io.run(["orders", "cancel", "1"]) == 0)
        #expect(io.stdout == "Order 1 is cancelled.\n")
        // Kept, cancelled: shown with its timeline, left out of the list unless asked for.
        let (shown, kept2) = try await Self.run(["orders", "show", "1"], endpoint: server.endpoint)
        #expect(shown == 0)
        #expect(kept2.stdout.contains("  status   cancelled\n"))
        #expect(kept2.stdout.contains(" cancelled by staff\n"))
        let listed = try await Self.run(["orders", "list"], endpoint: server.endpoint).1.stdout
        #expect(listed.contains("(1 order)"))
        let cancelled = try await Self.run(["orders", "list", "--status", "cancelled"], endpoint: server.endpoint)
        #expect(cancelled.1.stdout.contains("(1 order)"))
        #expect(cancelled.1.stdout.contains("cancelled"))
    }

    @Test func advanceMovesAnOrderAlongUntilNothingFollows() async throws {
        let server = try TestServer()
        try await Self.seed(server, ["Ann"])
        for (from, to) in [("placed", "baking"), ("baking", "out for delivery"), ("out for delivery", "delivered")] {
            let (status, io) = try await Self.run(["orders", "advance", "1"], endpoint: server.endpoint)
            #expect(status == 0, "\(io.stderr)")
            #expect(io.stdout == "Order 1: \(from) → \(to).\n")
        }
        let (done, io) = try await Self.run(["orders", "advance", "1"], endpoint: server.endpoint)
        #expect(done == 65)
        #expect(io.stderr.contains("Order 1 is delivered; nothing follows"))
        let shown = try await Self.run(["orders", "show", "1"], endpoint: server.endpoint).1.stdout
        let timeline = shown.split(separator: "\n").filter { $0.contains(" by ") }
        #expect(timeline.count == 4)
        #expect(timeline.first?.hasSuffix("placed by customer") == true)
        #expect(timeline.last?.hasSuffix("delivered by staff") == true)
    }

    @Test func aRefusedMoveSaysWhatIsAllowedAndExits65() async throws {
        let server = try TestServer()
        try await Self.seed(server, ["Ann"])
        let (skip, io) = try await Self.run(["orders", "advance", "1", "--to", "delivered"], endpoint: server.endpoint)
        #expect(skip == 65)
        #expect(io.stderr.contains("Allowed next: baking, cancelled"))
        _ = try await Self.run(["orders", "advance", "1"], endpoint: server.endpoint)
        let (noReason, io2) = try await Self.run(["orders", "cancel", "1", "--yes"], endpoint: server.endpoint)
        #expect(noReason == 65)
        #expect(io2.stderr.contains("needs a reason"))
        let (withReason, io3) = try await Self.run(
            ["orders", "cancel", "1", "--yes", "--reason", "oven broke"], endpoint: server.endpoint)
        #expect(withReason == 0, "\(io3.stderr)")
        let shown = try await Self.run(["orders", "show", "1"], endpoint: server.endpoint).1.stdout
        #expect(shown.contains("cancelled by staff: oven broke"))
        let (bad, io4) = try await Self.run(["orders", "list", "--status", "bakin"], endpoint: server.endpoint)
        #expect(bad == 64)
        #expect(io4.stderr.contains("baking"))
    }

    @Test(arguments: [
        ["orders", "show", "404"], ["orders", "cancel", "404", "--yes"], ["orders", "favorite", "404"],
    ])
    func anUnknownIdExits66(arguments: [String]) async throws {
        let server = try TestServer()
        let (status, io) = try await Self.run(arguments, endpoint: server.endpoint)
        #expect(status == 66)
        #expect(io.stderr.hasPrefix("Error: There is no order with id '404'"))
    }

    @Test func missingFieldsShowAFallbackInsteadOfFailing() async throws {
        let partial = #"{"page":1,"total":2,"data":[{"id":7,"name":"Ann"},{"createdAt":"yesterday","quantity":4}]}"#
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 200, body: partial)])
        let (status, io) = try await Self.run(["orders", "list"], endpoint: endpoint.endpoint)
        #expect(status == 0, "\(io.stderr)")
        let lines = io.stdout.split(separator: "\n").map(String.init)
        #expect(lines[1].hasPrefix("7 "))
        #expect(lines[1].contains("—"))
        #expect(lines[2].contains("yesterday"))
        #expect(lines[2].contains("4 × —"))
        #expect(lines.last == "page 1 of ? (2 orders)")
    }

    /// Every text the endpoint sends that `orders show` and `orders list` print, the id
    /// included, reaches the terminal with its control, bidi and separator characters escaped.
    @Test(arguments: [["orders", "show", "1"], ["orders", "list"]])
    func textFromTheEndpointIsEscapedEverywhere(arguments: [String]) async throws {
        let hostile = #"1\u001b]0;PWNED\u0007\u001b[31m\u009b\u2028\u202e"#
        let order =
            #"{"id":"\#(hostile)","createdAt":"\#(hostile)","type":2,"quantity":5,"specialRequestEnabled":false,"#
            + #""extraFrosting":false,"addSprinkles":false,"name":"\#(hostile)","streetAddress":"\#(hostile)","#
            + #""city":"\#(hostile)","zip":"\#(hostile)","costCents":1100}"#
        let body = arguments[1] == "show" ? #"{"data":\#(order)}"# : #"{"page":1,"total":1,"data":[\#(order)]}"#
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 200, body: body)])
        let (status, io) = try await Self.run(arguments, endpoint: endpoint.endpoint)
        #expect(status == 0, "\(io.stderr)")
        for scalar in io.stdout.unicodeScalars where scalar != "\n" {
            #expect(!TextSafety.mustEscape(scalar), "U+\(String(scalar.value, radix: 16)) reached the terminal")
        }
        #expect(io.stdout.contains(#"1\x1b]0;PWNED\x07"#))
    }

    /// The client's keys from files only their owner may read; a key flag works with a warning.
    @Test func theClientReadsKeysFromPrivateFilesAndWarnsAboutKeyFlags() async throws {
        let server = try TestServer {
            $0.apiKey = "app-k"
            $0.staffKey = "staff-k"
        }
        let directory = try TemporaryDirectory()
        let file = directory.path("staff.key")
        try "staff-k\n".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o640)
        let (open, openIO) = try await Self.run(
            ["orders", "list", "--staff-key-file", file], endpoint: server.endpoint)
        #expect(open == 78)
        #expect(openIO.stderr.contains("mode 0640"), "\(openIO.stderr)")
        chmod(file, 0o600)
        let (listed, listedIO) = try await Self.run(
            ["orders", "list", "--staff-key-file", file], endpoint: server.endpoint)
        #expect(listed == 0, "\(listedIO.stderr)")
        #expect(!listedIO.stderr.contains("warning"))
        let (flagged, flaggedIO) = try await Self.run(
            ["orders", "list", "--staff-key", "staff-k"], endpoint: server.endpoint)
        #expect(flagged == 0)
        #expect(flaggedIO.stderr.contains("warning: --staff-key puts the key in the command line"))
        #expect(flaggedIO.stdout.contains("No orders."))
    }

    @Test func aListThatIsNotReqresShapeExits76() async throws {
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 200, body: "[1,2]")])
        #expect(try await Self.run(["orders", "list"], endpoint: endpoint.endpoint).0 == 76)
    }

    @Test(arguments: [
        ["orders", "list", "--sort", "price"], ["orders", "list", "--per-page", "500"], ["orders", "show"],
        ["orders", "list", "--type", "mint"],
    ])
    func badArgumentsAreUsageErrors(arguments: [String]) async throws {
        let (status, io) = try await Self.run(arguments, endpoint: "http://127.0.0.1:9/api/cupcakes")
        #expect(status == 64)
        #expect(io.stderr.contains("cupcake \(arguments[0]) \(arguments[1]) --help"))
    }
}
