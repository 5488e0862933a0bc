import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake track`: the customer's view of an order placed from this machine (its saved
/// receipt), and with `--follow` each change as it happens, across a broken stream. The
/// follower runs as a process of its own, as a customer runs it, so it keeps going while the
/// test runner's threads are busy with other tests.
@Suite struct TrackCommandTests {
    static func environment(_ endpoint: String, _ home: TemporaryDirectory) -> [String: String] {
        ["XDG_CONFIG_HOME": home.path("config"), "XDG_DATA_HOME": home.path("data"), "CUPCAKE_ENDPOINT": endpoint]
    }

    static func place(_ environment: [String: String]) async {
        let placer = TestConsole(environment: environment)
        let status = await placer.run([
            "order", "--type", "2", "--qty", "5", "--name", "Taylor", "--street", "1 Main St", "--city", "Nashville",
            "--zip", "37201",
        ])
        #expect(status == 0, "\(placer.stderr)")
    }

    static func move(port: Int, _ id: String, _ status: String) throws {
        let answer = try RawHTTP.request(
            port: port, method: "PATCH", path: "/api/cupcakes/\(id)", body: Data(#"{"status":"\#(status)"}"#.utf8))
        #expect(answer.status == 200, "\(status): \(answer.text)")
    }

    /// Waits (at most 30 s) until `condition` holds, without holding a thread the command
    /// being followed may need.
    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition() && Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
        return condition()
    }

    @Test func trackShowsWhereTheOrderIsAndFollowPrintsEachChangeUntilDelivered() async throws {
        let server = try TestServer()
        let home = try TemporaryDirectory()
        let environment = Self.environment(server.endpoint, home)
        await Self.place(environment)
        let shown = TestConsole(environment: environment)
        #expect(await shown.run(["track", "1"]) == 0)
        #expect(shown.stdout.hasPrefix("Order 1: placed\n"))
        #expect(shown.stdout.contains(" placed by customer\n"))
        let follower = try CommandProcess(["track", "1", "--follow"], environment: environment)
        #expect(await Self.waitUntil { follower.stderr.contains("Following order 1") })
        for status in ["baking", "out_for_delivery", "delivered"] { try Self.move(port: server.port, "1", status) }
        #expect(await follower.wait() == 0, "\(follower.stderr)")
        let lines = follower.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Order 1: placed")
        let moves = lines.filter { $0.hasSuffix(" by staff") }
        #expect(moves.count == 3)
        #expect(
            moves.map {
                $0.contains("  baking by") || $0.contains("  out for delivery by") || $0.contains("  delivered by")
            } == [true, true, true])
        #expect(moves.last?.hasSuffix("  delivered by staff") == true)
        #expect(lines.last == "Order 1 is delivered.")
    }

    @Test func followSaysWhenTheStreamBreaksAndMissesNoChangeAcrossIt() async throws {
        let port = try CupcakeTestSupport.FreePort.next()
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--quiet", "--port", String(port)])
        let environment = Self.environment("http://127.0.0.1:\(port)/api/cupcakes", directory)
        await Self.place(environment)
        let follower = try CommandProcess(["track", "1", "--follow"], environment: environment)
        #expect(await Self.waitUntil { follower.stderr.contains("Following order 1") })
        try Self.move(port: port, "1", "baking")
        #expect(await Self.waitUntil { follower.stdout.contains("baking by staff") })
        server.kill9()
        #expect(await Self.waitUntil { follower.stderr.contains("The live updates broke") })
        try server.start()
        try Self.move(port: port, "1", "out_for_delivery")
        try Self.move(port: port, "1", "delivered")
        #expect(await follower.wait() == 0, "\(follower.stderr)")
        #expect(follower.stderr.contains("Resumed."))
        for status in ["baking", "out for delivery", "delivered"] {
            #expect(follower.stdout.components(separatedBy: "  \(status) by staff").count == 2, "\(status) once")
        }
        #expect(follower.stdout.hasSuffix("Order 1 is delivered.\n"))
        #expect(server.stop() == 0)
    }
}
