import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake order` at a terminal with no order options asks for the order, as the app's screens
/// do; piped input never sees a question.
@Suite struct GuidedOrderTests {
    static let savedAddress = ["--name", "Taylor", "--street", "1 Main St", "--city", "Nashville", "--zip", "37201"]

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var typed: [String]
        var saved: Bool = true
        /// The order stored, or nil when nothing may be sent.
        var placed: Order?
        /// What the questions' side must have said.
        var said: [String] = []
        var testDescription: String { label }
    }

    static let taylor = (name: "Taylor", street: "1 Main St", city: "Nashville", zip: "37201")

    static let cases: [Case] = [
        Case(
            label: "Enter everywhere keeps the defaults and the saved address",
            typed: ["", "", "", "", "", "", "", ""],
            placed: Order(
                type: 0, quantity: 3, name: "Taylor", streetAddress: "1 Main St", city: "Nashville", zip: "37201"),
            said: ["1) Vanilla", "4) Rainbow", "[Taylor]", "Total", "$6.00", "Place order? [Y/n]"]),
        Case(
            label: "wrong answers are explained and asked again",
            typed: ["7", "choclate", "chocolate", "25", "two", "5", "maybe", "y", "y", "n", "", "", "", "", "yes"],
            placed: Order(
                type: 2, quantity: 5, specialRequestEnabled: true, extraFrosting: true, name: "Taylor",
                streetAddress: "1 Main St", city: "Nashville", zip: "37201"),
            said: [
                "Please answer 1 to 4, or a name", "Please answer a whole number from 3 to 20.",
                "Please answer y or n.", "Extra frosting, $1.00 a cake", "$16.00",
            ]),
        Case(
            label: "a new address replaces the saved one's fields for this order",
            typed: ["3", "3", "n", "Ann", "2 Elm", "Austin", "73301", "y"],
            placed: Order(type: 2, quantity: 3, name: "Ann", streetAddress: "2 Elm", city: "Austin", zip: "73301")),
        Case(
            label: "without a saved address each field is needed, and a bad one is asked again",
            typed: ["", "", "", String(repeating: "x", count: 101), "Ann", "2 Elm", "Austin", "73301", ""],
            saved: false,
            placed: Order(type: 0, quantity: 3, name: "Ann", streetAddress: "2 Elm", city: "Austin", zip: "73301"),
            said: ["Name must be at most 100 characters"]),
        Case(
            label: "no at the end sends nothing", typed: ["", "", "", "", "", "", "", "n"],
            said: ["Place order? [Y/n]", "No order placed."]),
        Case(label: "the end of input midway sends nothing", typed: ["2", "4"], said: ["No order placed."]),
        Case(
            label: "an empty answer where one is needed leaves", typed: ["", "", "", ""], saved: false,
            said: ["Name: ", "No order placed."]),
        Case(
            label: "too many wrong answers leave", typed: ["9", "9", "9", "9", "9", "1"],
            said: ["Too many answers that did not fit", "No order placed."]),
    ]

    @Test(arguments: cases) func aPersonAtATerminal(_ example: Case) async throws {
        let directory = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": directory.path("config"), "XDG_DATA_HOME": directory.path("data")]
        let server = try TestServer()
        defer { server.shutdown() }
        if example.saved {
            #expect(
                await TestConsole(stdin: "", environment: environment).run(["address", "set"] + Self.savedAddress) == 0)
        }
        let io = TestConsole(typing: example.typed, environment: environment)
        #expect(await io.run(["order", "--endpoint", server.endpoint]) == 0, "\(io.stderr)")
        for text in example.said {
            #expect(io.stderr.contains(text), "\(text) not in: \(io.stderr)")
        }
        let stored = try OrdersOnServer.all(port: server.port)
        if let placed = example.placed {
            #expect(stored == [placed], "\(io.stderr)")
            #expect(io.stdout.contains("is on its way"))
        } else {
            #expect(stored.isEmpty)
            #expect(io.stdout.isEmpty)
        }
    }

    @Test func optionsOrPipedInputAreNeverAsked() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": directory.path("config"), "XDG_DATA_HOME": directory.path("data")]
        // Options on a terminal: placed as given, nothing asked.
        let flags = TestConsole(typing: [], environment: environment)
        #expect(await flags.run(["order", "--type", "1", "--endpoint", server.endpoint] + Self.savedAddress) == 0)
        #expect(!flags.stderr.contains("?"), "\(flags.stderr)")
        // A pipe: the JSON is the order, nothing asked.
        let result = try ProcessRunner.cupcake(
            ["order", "--endpoint", server.endpoint],
            stdin: #"{"type":3,"quantity":4,"name":"Ann","streetAddress":"2 Elm","city":"Austin","zip":"73301"}"#,
            environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(try OrdersOnServer.all(port: server.port).map(\.type) == [1, 3])
    }

    /// The real executable on a pseudo-terminal, as a person would meet it.
    @Test func onARealTerminal() throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": directory.path("config"), "XDG_DATA_HOME": directory.path("data")]
        let saved = try ProcessRunner.cupcake(["address", "set"] + Self.savedAddress, environment: environment)
        #expect(saved.status == 0)
        let placed = try PseudoTerminal.run(
            ProcessRunner.cupcakeExecutable, ["order", "--endpoint", server.endpoint],
            typing: ["5", "2", "4", "y", "n", "y", "", "", "", "", ""], environment: environment)
        #expect(placed.status == 0, "\(placed.screen)")
        #expect(placed.screen.contains("Please answer 1 to 4"), "\(placed.screen)")
        #expect(placed.screen.contains("Place order? [Y/n]"))
        #expect(placed.screen.contains("Your order for 4x strawberry cupcakes is on its way!"), "\(placed.screen)")
        #expect(
            try OrdersOnServer.all(port: server.port)
                == [
                    Order(
                        type: 1, quantity: 4, specialRequestEnabled: true, addSprinkles: true, name: "Taylor",
                        streetAddress: "1 Main St", city: "Nashville", zip: "37201")
                ])
        // Ctrl-D at the first question: nothing sent.
        let left = try PseudoTerminal.run(
            ProcessRunner.cupcakeExecutable, ["order", "--endpoint", server.endpoint], typing: ["\u{4}"],
            environment: environment)
        #expect(left.status == 0)
        #expect(left.screen.contains("No order placed."), "\(left.screen)")
        #expect(try OrdersOnServer.all(port: server.port).count == 1)
    }
}

/// The orders a server holds, read back over HTTP.
enum OrdersOnServer {
    static func all(port: Int) throws -> [Order] {
        let answer = try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes?per_page=100&sort=createdAt")
        let rows = answer.json?["data"] as? [[String: Any]] ?? []
        return try rows.map { row in
            var fields = row
            for key in ["id", "createdAt", "costCents", "currency", "isFavorite"] { fields[key] = nil }
            return try Order.decode(json: JSONSerialization.data(withJSONObject: fields))
        }
    }
}
