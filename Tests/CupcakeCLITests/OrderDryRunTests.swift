import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@Suite struct OrderDryRunTests {
    static let address = ["--name", "Taylor", "--street", "1 Main St", "--city", "Nashville", "--zip", "37201"]

    @Test func dryRunPrintsTheJSONThatWouldBeSent() async throws {
        let io = TestConsole()
        #expect(
            await io.run(
                ["order", "--type", "chocolate", "--qty", "5", "--frosting", "--dry-run", "--json"] + Self.address) == 0
        )
        let order = try Order.decode(json: Data(io.stdout.utf8))
        #expect(
            order
                == Order(
                    type: 2, quantity: 5, specialRequestEnabled: true, extraFrosting: true, name: "Taylor",
                    streetAddress: "1 Main St", city: "Nashville", zip: "37201"))
    }

    @Test func dryRunFromPipedJSONAppliesTheResetRule() async throws {
        let json =
            #"{"type":1,"quantity":6,"specialRequestEnabled":false,"addSprinkles":true,"name":" Ann ","streetAddress":"2 Elm","city":"Austin","zip":"73301"}"#
        let io = TestConsole(stdin: json)
        #expect(await io.run(["order", "--dry-run"]) == 0)
        // The prose goes to standard error; standard output is the JSON alone, for `| jq`.
        #expect(io.stderr.contains("costs $12.50"))
        #expect(io.stdout.contains(#""addSprinkles" : false"#))
        #expect(io.stdout.contains(#""name" : "Ann""#))
        #expect(try Order.decode(json: Data(io.stdout.utf8)).name == "Ann")
    }
}
