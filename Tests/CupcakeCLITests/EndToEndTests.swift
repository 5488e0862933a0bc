import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

/// Runs the built `cupcake` binary as a person would.
@Suite struct EndToEndTests {
    @Test func priceFromFlags() throws {
        let result = try ProcessRunner.cupcake(["price", "--type", "2", "--qty", "5", "--frosting"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("$16.00"))
        #expect(result.stderr.isEmpty)
    }

    @Test func pricePipedJSON() throws {
        let result = try ProcessRunner.cupcake(
            ["price", "--json"], stdin: #"{"type":0,"quantity":4,"specialRequestEnabled":false,"extraFrosting":true}"#
        )
        #expect(result.status == 0)
        #expect(result.stdout.contains(#""costCents" : 800"#))
    }

    @Test func aBadOptionExits64OnStderr() throws {
        let result = try ProcessRunner.cupcake(["price", "--bogus"])
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("Error: Unknown option '--bogus'."))
    }

    @Test func aBlankNameOnStdinExits65() throws {
        let result = try ProcessRunner.cupcake(
            ["order", "--dry-run"],
            stdin: #"{"type":1,"quantity":3,"name":" ","streetAddress":"a","city":"b","zip":"c"}"#
        )
        #expect(result.status == 65)
        #expect(result.stderr.contains("name must not be blank"))
    }

    @Test func versionPrintsTheVersion() throws {
        let result = try ProcessRunner.cupcake(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == Cupcake.version + "\n")
    }
}
