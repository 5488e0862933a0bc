import CupcakeTestSupport
import Foundation
import Testing

/// `GET /metrics`: valid Prometheus text (checked by Prometheus's own `promtool`), counting what
/// the server really did, on either engine.
@Suite struct MetricsTests {
    static let order = #"{"type":1,"quantity":6,"name":"Ann","streetAddress":"2 Elm","city":"Austin","zip":"73301"}"#

    /// The samples of an exposition: `name{labels}` → value.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    static func promtool(_ text: String) throws -> ProcessRunner.Result {
        let path = "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSocketError(message: "promtool is missing: scripts/test installs Debian's prometheus")
        }
        return try ProcessRunner.run(URL(fileURLWithPath: path), ["check", "metrics"], stdin: Data(text.utf8))
    }

    @Test(arguments: Engine.allCases)
    func theExpositionPassesPromtoolAndCountsWhatHappened(engine: Engine) throws {
        let server = try TestServer(engine: engine)
        let first = try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["Idempotency-Key": "m-1"])
        #expect(first.status == 201)
        let replay = try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["Idempotency-Key": "m-1"])
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(try RawHTTP.postOrder(port: server.port, json: Self.order).status == 201)
        #expect(try RawHTTP.postOrder(port: server.port, json: "{}").status == 422)
        let id = try #require(first.json?["id"] as? String)
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)").status == 200)
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/999999").status == 404)
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/nowhere").status == 404)

        let response = try RawHTTP.request(port: server.port, method: "GET", path: "/metrics")
        #expect(response.status == 200)
        #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let check = try Self.promtool(response.text)
        #expect(check.status == 0, "promtool: \(check.stdout) \(check.stderr)\n\(response.text)")

        let samples = Self.samples(response.text)
        let requests = #"cupcake_http_requests_total{method="POST",route="/api/cupcakes","#
        #expect(samples[requests + #"status="201"}"#] == 3)
        #expect(samples[requests + #"status="422"}"#] == 1)
        // Each order's path is one series, not one per id.
        #expect(samples[#"cupcake_http_requests_total{method="GET",route="/api/cupcakes/{id}",status="200"}"#] == 1)
        #expect(samples[#"cupcake_http_requests_total{method="GET",route="/api/cupcakes/{id}",status="404"}"#] == 1)
        #expect(samples[#"cupcake_http_requests_total{method="GET",route="other",status="404"}"#] == 1)
        #expect(samples[#"cupcake_http_request_duration_seconds_count{route="/api/cupcakes"}"#] == 4)
        #expect(samples[#"cupcake_http_request_duration_seconds_bucket{route="/api/cupcakes",le="+Inf"}"#] == 4)
        #expect(samples["cupcake_orders_created_total"] == 2)
        #expect(samples["cupcake_idempotent_replays_total"] == 1)
        // Two orders committed, in one or two batches.
        #expect(samples["cupcake_commit_batch_orders_sum"] == 2)
        #expect((1...2).contains(samples["cupcake_commit_batch_orders_count"] ?? 0))
        #expect(samples[#"cupcake_storage_errors_total{kind="temporary"}"#] == 0)
        // This request's own connection is open.
        #expect((samples["cupcake_http_connections_open"] ?? 0) >= 1)
    }

    @Test func storageErrorsAreCountedWhenTheDatabaseIsGone() throws {
        // PostgreSQL only: a database dropped under the server makes each write a storage error.
        let database = try PostgresFixture.shared.get().newDatabase()
        let server = try ServerProcess(databasePath: database.url, arguments: ["--quiet"])
        #expect(try RawHTTP.postOrder(port: server.port, json: Self.order).status == 201)
        try database.psql("DROP TABLE orders CASCADE")
        let failed = try RawHTTP.postOrder(port: server.port, json: Self.order)
        #expect(failed.status == 500)
        #expect(failed.headers["content-type"] == "application/problem+json")
        let samples = Self.samples(try RawHTTP.request(port: server.port, method: "GET", path: "/metrics").text)
        #expect(samples[#"cupcake_storage_errors_total{kind="failed"}"#] == 1)
        #expect(samples["cupcake_orders_created_total"] == 1)
        #expect(server.stop() == 0)
    }

    @Test func withKeysOnlyTheStaffKeyReadsThem() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--quiet", "--api-key", "app-1", "--staff-key", "staff-1"])
        let app = try RawHTTP.request(
            port: server.port, method: "GET", path: "/metrics", headers: ["x-api-key": "app-1"])
        #expect(app.status == 403)
        #expect(app.headers["content-type"] == "application/problem+json")
        let staff = try RawHTTP.request(
            port: server.port, method: "GET", path: "/metrics", headers: ["x-api-key": "staff-1"])
        #expect(staff.status == 200)
        #expect(try Self.promtool(staff.text).status == 0)
        #expect(
            try RawHTTP.request(
                port: server.port, method: "POST", path: "/metrics", headers: ["x-api-key": "staff-1"], body: Data()
            ).status == 405)
        #expect(server.stop() == 0)
    }
}
