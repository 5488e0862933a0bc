import CupcakeTestSupport
import Foundation
import Testing

/// A disk that will not take more: here a file-size limit (`ulimit -f`), which the kernel
/// enforces with SIGXFSZ, whose default action kills the process.
@Suite struct FileSizeLimitTests {
    @Test func pastTheLimitOrdersGet503AndTheServerKeepsWhatItAcknowledged() throws {
        let directory = try TemporaryDirectory()
        // 2 MiB: the WAL reaches it after a hundred or so single-order commits.
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"), fileSizeLimitKiB: 2048)
        var acknowledged: [String] = []
        var refused: RawHTTP.Response?
        // Bounded: the limit is reached long before 3,000 orders.
        for number in 0..<3_000 {
            let body = HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: "Limit \(number)")
            let response = try RawHTTP.postOrder(port: server.port, json: body)
            guard response.status == 201, let id = response.json?["id"] as? String else {
                refused = response
                break
            }
            acknowledged.append(id)
        }
        let answer = try #require(refused, "3,000 orders fit under a 2 MiB file-size limit")
        #expect(answer.status == 503)
        #expect(answer.headers["content-type"] == "application/problem+json")
        #expect(server.isRunning, "the server died at the limit: \(server.log)")
        #expect(acknowledged.count > 10)
        // The server still answers, and every order it acknowledged is there.
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/healthz").status == 200)
        for id in acknowledged {
            #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)").status == 200)
        }
        #expect(server.stop() == 0)
    }
}
