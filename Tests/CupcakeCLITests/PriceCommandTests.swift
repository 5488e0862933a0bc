import CupcakeTestSupport
import Foundation
import Testing

@Suite struct PriceCommandTests {
    @Test func pricesFromFlags() async {
        let io = TestConsole()
        let status = await io.run(["price", "--type", "2", "--qty", "5", "--frosting"])
        #expect(status == 0)
        #expect(io.stdout.contains("Total"))
        #expect(io.stdout.hasSuffix("$16.00\n"))
        #expect(io.stderr.isEmpty)
    }

    @Test func equalsSignValuesAndNamesWork() async {
        let io = TestConsole()
        #expect(await io.run(["price", "--type=RAINBOW", "--quantity=3", "--frosting", "--sprinkles"]) == 0)
        #expect(io.stdout.hasSuffix("$12.00\n"))
    }

    /// An option given twice counts its last value, in either spelling; a flag given twice is on.
    @Test(arguments: [
        (["--qty", "3", "--qty", "5"], "$10.00"),
        (["--qty=5", "--qty", "3"], "$6.00"),
        (["--qty", "3", "--quantity=4", "--type", "RAINBOW", "--type=0"], "$8.00"),
        (["--qty", "3", "--frosting", "--frosting"], "$9.00"),
    ])
    func aRepeatedOptionCountsItsLastValue(arguments: [String], total: String) async {
        let io = TestConsole()
        #expect(await io.run(["price"] + arguments) == 0)
        #expect(io.stdout.hasSuffix("\(total)\n"), "\(io.stdout)")
    }

    @Test func jsonOnStdinWithSpecialRequestsOffIgnoresTheExtras() async throws {
        let io = TestConsole(stdin: #"{"type":0,"quantity":4,"specialRequestEnabled":false,"extraFrosting":true}"#)
        #expect(await io.run(["price", "--json"]) == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(io.stdout.utf8)) as? [String: Any])
        #expect(object["costCents"] as? Int == 800)
        #expect(object["currency"] as? String == "USD")
        #expect((object["lineItems"] as? [[String: Any]])?.count == 1)
    }

    @Test func dashReadsStdinAndOptionsOverrideIt() async {
        let io = TestConsole(stdin: #"{"type":0,"quantity":4}"#)
        #expect(await io.run(["price", "-", "--qty", "10", "--frosting"]) == 0)
        #expect(io.stdout.hasSuffix("$30.00\n"))
    }

    @Test func optionsWithoutDashDoNotReadStdin() async {
        let io = TestConsole(stdin: "this is not JSON")
        #expect(await io.run(["price", "--qty", "4"]) == 0)
        #expect(io.stdout.hasSuffix("$8.00\n"))
    }

    @Test func emptyStdinMeansTheDefaultOrder() async {
        let io = TestConsole(stdin: "")
        #expect(await io.run(["price"]) == 0)
        #expect(io.stdout.hasSuffix("$6.00\n"))
    }

    @Test func aTerminalIsNeverReadUnasked() async {
        let io = TestConsole(stdin: nil)
        #expect(await io.run(["price"]) == 0)
        #expect(io.stdout.hasSuffix("$6.00\n"))
    }

    @Test func dashOnATerminalIsAUsageError() async {
        let io = TestConsole(stdin: nil)
        #expect(await io.run(["price", "-"]) == 64)
        #expect(io.stderr.contains("terminal"))
    }

    @Test func frostingTurnsSpecialRequestsOnOverJSONThatHasThemOff() async {
        let io = TestConsole(stdin: #"{"type":0,"quantity":3,"specialRequestEnabled":false}"#)
        #expect(await io.run(["price", "-", "--frosting"]) == 0)
        #expect(io.stdout.hasSuffix("$9.00\n"))
    }
}
