import CupcakeTestSupport
import Foundation
import Testing

/// The built `cupcake order` binary against a real `cupcake serve` process.
@Suite struct CheckoutEndToEndTests {
    @Test func ordersByFlagsAndByPipedJSONAreStoredAndFetchable() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--api-key", "k", "--staff-key", "staff"])
        let environment = [
            "XDG_CONFIG_HOME": directory.path("config"), "CUPCAKE_ENDPOINT": "\(server.baseURL)/api/cupcakes",
            "CUPCAKE_API_KEY": "k",
        ]
        let byFlags = try ProcessRunner.cupcake(
            [
                "order", "--type", "2", "--qty", "5", "--frosting", "--name", "Taylor", "--street", "1 Main St",
                "--city", "Nashville", "--zip", "37201",
            ],
            environment: environment)
        #expect(byFlags.status == 0, "\(byFlags.stderr)")
        #expect(byFlags.stdout.hasPrefix("Your order for 5x chocolate cupcakes is on its way!\n"))
        #expect(byFlags.stdout.contains("$16.00"))
        #expect(byFlags.stderr.isEmpty)

        let piped = try ProcessRunner.cupcake(
            ["order", "--json"],
            stdin:
                #"{"type":3,"quantity":3,"extraFrosting":true,"addSprinkles":true,"name":"Bo","streetAddress":"9 Oak","city":"Reno","zip":"89501"}"#,
            environment: environment)
        #expect(piped.status == 0, "\(piped.stderr)")
        let confirmation = try #require(
            try JSONSerialization.jsonObject(with: Data(piped.stdout.utf8)) as? [String: Any])
        #expect(confirmation["costCents"] as? Int == 1200)
        let id = try #require(confirmation["id"] as? String)

        let stored = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/cupcakes/\(id)", headers: ["x-api-key": "staff"])
        #expect((stored.json?["data"] as? [String: Any])?["name"] as? String == "Bo")
        server.stop()
    }

    @Test func aWrongAPIKeyExits77WithTheServersMessage() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--api-key", "right"])
        let result = try ProcessRunner.cupcake(
            [
                "order", "--name", "A", "--street", "B", "--city", "C", "--zip", "D", "--api-key", "wrong",
                "--endpoint", "\(server.baseURL)/api/cupcakes",
            ],
            environment: ["XDG_CONFIG_HOME": directory.path("config")])
        #expect(result.status == 77)
        #expect(result.stderr.contains("x-api-key"))
        #expect(!result.stderr.contains("Fatal"))
        server.stop()
    }
}
