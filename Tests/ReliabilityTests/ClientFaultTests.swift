import CupcakeTestSupport
import Foundation
import Testing

/// Part 6: the endpoint dies mid-response, truncates the body or closes the connection.
/// `cupcake order` reports it with the right exit code, and its retry never doubles the order.
@Suite struct ClientFaultTests {
    static let arguments = [
        "order", "--type", "1", "--qty", "4", "--name", "Ann", "--street", "2 Elm", "--city", "Austin", "--zip",
        "73301",
    ]

    static func order(_ endpoint: String, _ extra: [String]) throws -> ProcessRunner.Result {
        let home = try TemporaryDirectory()
        return try ProcessRunner.cupcake(
            arguments + ["--endpoint", endpoint] + extra, environment: ["XDG_CONFIG_HOME": home.path("config")])
    }

    static func keys(_ proxy: FaultyProxy) -> [String] {
        proxy.requests.compactMap { request in
            String(decoding: request, as: UTF8.self).components(separatedBy: "\r\n")
                .first { $0.lowercased().hasPrefix("idempotency-key:") }
                .map { $0.dropFirst("idempotency-key:".count).trimmingCharacters(in: .whitespaces) }
        }
    }

    @Test(arguments: [FaultyProxy.Fault.dieMidResponse, .truncatedBody, .closeWithoutAnswer])
    func aRetryAfterAFaultPlacesTheOrderOnce(fault: FaultyProxy.Fault) throws {
        let server = try TestServer()
        let proxy = try FaultyProxy(backendPort: server.port, script: [fault, .pass])
        let result = try Self.order(proxy.endpoint, [])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("Your order for 4x strawberry cupcakes is on its way!"))
        #expect(Self.keys(proxy).count == 2)
        #expect(Set(Self.keys(proxy)).count == 1)
        #expect(try server.orderCount() == 1)
    }

    @Test(arguments: [FaultyProxy.Fault.dieMidResponse, .truncatedBody, .closeWithoutAnswer])
    func withoutRetriesTheFaultExits75AndARerunWithTheKeyDoesNotDouble(fault: FaultyProxy.Fault) throws {
        let server = try TestServer()
        let proxy = try FaultyProxy(backendPort: server.port, script: [fault])
        let failed = try Self.order(proxy.endpoint, ["--retries", "0", "--idempotency-key", "fault-key"])
        #expect(failed.status == 75, "\(failed.stderr)")
        #expect(failed.stderr.hasPrefix("Error: "))
        #expect(failed.stderr.split(separator: "\n").count == 1)
        #expect(!failed.stderr.contains("Error Domain"))
        #expect(try server.orderCount() == 1)  // the server did place it; only the answer was lost
        let again = try Self.order(proxy.endpoint, ["--idempotency-key", "fault-key"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try server.orderCount() == 1)
    }

    @Test func anEndpointThatDiesExits69OrRetriesThenSucceeds() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"))
        let endpoint = "\(server.baseURL)/api/cupcakes"
        server.kill9()
        let dead = try Self.order(endpoint, ["--retries", "1"])
        #expect(dead.status == 69)
        #expect(dead.stderr.contains(endpoint))
        #expect(dead.stderr.contains("2 tries"))
    }
}

extension FaultyProxy.Fault: CustomTestStringConvertible {
    public var testDescription: String {
        switch self {
        case .pass: "pass"
        case .dieMidResponse: "dies mid-response"
        case .truncatedBody: "truncated body"
        case .closeWithoutAnswer: "closes without an answer"
        }
    }
}
