import CupcakeServer
import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake webhooks …` and `cupcake events list` in-process against a real server.
@Suite struct WebhooksCommandTests {
    static func run(_ arguments: [String], _ server: TestServer) async throws -> (Int32, TestConsole) {
        try await OrdersCommandTests.run(arguments, endpoint: server.endpoint)
    }

    /// A loopback port nothing listens on: deliveries there fail at once.
    static func closedPort() throws -> Int {
        let probe = try TestServer()
        let port = probe.port
        probe.server.shutdown()
        return port
    }

    @Test func addListDeliveriesEventsAndRemove() async throws {
        let server = try TestServer {
            $0.webhooks.allowPrivateAddresses = true
            $0.webhooks.retryScale = 0.001
        }
        let url = "http://127.0.0.1:\(try Self.closedPort())/hooks"
        let (added, addIO) = try await Self.run(["webhooks", "add", url, "--events", "order.placed"], server)
        #expect(added == 0, "\(addIO.stderr)")
        let lines = addIO.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Webhook endpoint 1 sends order.placed to \(url).")
        #expect(lines.last?.hasPrefix("whsec_") == true)

        try await OrdersCommandTests.seed(server, ["Ann"])
        // The delivery fails (nothing listens there): the attempt is listed with why.
        var shown = ""
        for _ in 0..<200 {
            let (status, io) = try await Self.run(["webhooks", "deliveries", "1"], server)
            #expect(status == 0, "\(io.stderr)")
            shown = io.stdout
            if shown.contains("no answer") { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(shown.contains("evt_1"), "\(shown)")
        #expect(shown.contains("no answer"), "\(shown)")
        let (_, listIO) = try await Self.run(["webhooks", "list"], server)
        #expect(listIO.stdout.contains("failing since"), "\(listIO.stdout)")
        #expect(listIO.stdout.contains(url))

        let (eventsStatus, eventsIO) = try await Self.run(["events", "list"], server)
        #expect(eventsStatus == 0, "\(eventsIO.stderr)")
        #expect(eventsIO.stdout.contains("evt_1  order.placed  order 1"), "\(eventsIO.stdout)")
        let next = try #require(eventsIO.stdout.split(separator: "\n").last)
        #expect(next.hasPrefix("Next: --after "))
        let (_, laterIO) = try await Self.run(["events", "list", "--after", String(next.dropFirst(14))], server)
        #expect(laterIO.stdout.hasPrefix("Nothing new"), "\(laterIO.stdout)")

        let (removed, removeIO) = try await Self.run(["webhooks", "remove", "1"], server)
        #expect(removed == 0, "\(removeIO.stderr)")
        let (_, emptyIO) = try await Self.run(["webhooks", "list"], server)
        #expect(emptyIO.stdout.hasPrefix("No webhook endpoints"))
        let (again, againIO) = try await Self.run(["webhooks", "remove", "1"], server)
        #expect(again != 0)
        #expect(againIO.stderr.contains("no webhook endpoint with id '1'"), "\(againIO.stderr)")
    }

    @Test func aLoopbackReceiverIsRefusedByDefaultAndABadTypeIsAUsageError() async throws {
        let server = try TestServer()
        let (refused, io) = try await Self.run(["webhooks", "add", "http://127.0.0.1:9/hooks"], server)
        #expect(refused == 65, "\(io.stderr)")
        #expect(io.stderr.contains("loopback"), "\(io.stderr)")
        let (usage, usageIO) = try await Self.run(
            ["webhooks", "add", "https://kitchen.example/hooks", "--events", "order.baked"], server)
        #expect(usage == 64)
        #expect(usageIO.stderr.contains("order.baked"))
    }
}
