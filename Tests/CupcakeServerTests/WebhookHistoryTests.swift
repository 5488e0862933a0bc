import CupcakeStorage
import CupcakeTestSupport
import Foundation
import Testing

/// The running server forgets delivery history older than `webhookHistoryDays` on its own,
/// and keeps what is newer.
@Suite struct WebhookHistoryTests {
    @Test(arguments: Engine.allCases)
    func attemptsOlderThanTheHistoryGoWhileTheServerRuns(_ engine: Engine) throws {
        let server = try TestServer(engine: engine) {
            $0.staffKey = "staff-key"
            $0.webhooks.allowPrivateAddresses = true
            $0.webhooks.historyDays = 30
        }
        defer { server.shutdown() }
        let staff = ["x-api-key": "staff-key"]
        let made = try RawHTTP.request(
            port: server.port, method: "POST", path: "/api/webhook-endpoints", headers: staff,
            body: Data(#"{"url": "http://127.0.0.1:9/hooks"}"#.utf8))
        #expect(made.status == 201, "\(made.text)")
        // Two attempts written beside the server: one 31 days old, one from now.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let store = try OrderStores.open(server.databasePath, options: OrderStores.Options(poolSize: 1))
        let endpointID = try #require(try store.webhookEndpoints().first?.id)
        try store.recordWebhookResults(
            [(now - 31 * 86_400_000, 1), (now, 2)].map { at, event in
                WebhookResult(
                    attempt: WebhookAttempt(
                        deliveryID: 0, endpointID: endpointID, eventID: event, atMilliseconds: at, status: 204,
                        durationMilliseconds: 1, error: nil),
                    outcome: .delivered, endpointChange: nil)
            })
        store.close()
        let path = "/api/webhook-endpoints/\(endpointID)/deliveries"
        func eventIDs() throws -> [String] {
            let answer = try RawHTTP.request(port: server.port, method: "GET", path: path, headers: staff)
            let json = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
            return (json?["data"] as? [[String: Any]] ?? []).compactMap { $0["eventId"] as? String }
        }
        #expect(try eventIDs().count == 2)
        // The server prunes every 10 s: wait (bounded) for the old attempt to go.
        var left = try eventIDs()
        for _ in 0..<300 where left.count > 1 {
            usleep(100_000)
            left = try eventIDs()
        }
        #expect(left == ["evt_2"])
    }
}
