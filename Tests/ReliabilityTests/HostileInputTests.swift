import CupcakeTestSupport
import Foundation
import Testing

/// Part 3: several hundred hostile bodies against the server, `cupcake price` and
/// `cupcake order --dry-run`. Nothing crashes, nothing answers 5xx, every refusal is clear.
@Suite struct HostileInputTests {
    static let corpus = HostileCorpus.cases()

    @Test func theCorpusIsSeveralHundredBodies() {
        #expect(Self.corpus.count >= 300)
    }

    @Test func theServerAnswers4xxProblemOr201AndStaysHealthy() throws {
        let server = try TestServer()
        var statuses: [Int: Int] = [:]
        var wrong: [String] = []
        for item in Self.corpus {
            let response = try RawHTTP.request(
                port: server.port, method: "POST", path: "/api/cupcakes", headers: ["Content-Type": "application/json"],
                body: item.body, timeout: 20)
            statuses[response.status, default: 0] += 1
            let isProblem =
                response.headers["content-type"] == "application/problem+json"
                && response.json?["status"] as? Int == response.status
            if !(response.status == 201 || ((400...499).contains(response.status) && isProblem)) {
                wrong.append("\(item): \(response.status) \(response.text.prefix(100))")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/healthz").status == 200)
        #expect(try server.orderCount() == statuses[201, default: 0])
        print(
            "RELIABILITY hostile-server: \(Self.corpus.count) bodies, answers \(statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")), 5xx 0, crashes 0"
        )
    }

    @Test func sqlLookingTextIsStoredAsPlainText() throws {
        let server = try TestServer()
        for name in HostileCorpus.sqlNames {
            let json = HostileCorpus.valid.replacingOccurrences(
                of: #""name":"Taylor""#, with: #""name":\#(HostileCorpus.jsonString(name))"#)
            let created = try RawHTTP.postOrder(port: server.port, json: json)
            #expect(created.status == 201)
            let id = try #require(created.json?["id"] as? String)
            let fetched = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)")
            #expect((fetched.json?["data"] as? [String: Any])?["name"] as? String == name)
            let prefix = String(name.prefix(6)).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let listed = try RawHTTP.request(
                port: server.port, method: "GET", path: "/api/cupcakes?name_prefix=\(prefix)")
            #expect((listed.json?["data"] as? [[String: Any]])?.contains { $0["name"] as? String == name } == true)
        }
        #expect(try server.orderCount() == HostileCorpus.sqlNames.count)
    }

    @Test(arguments: [["price"], ["order", "--dry-run"]])
    func theCLIExits65WithOneClearMessageOrSucceeds(arguments: [String]) async throws {
        let home = try TemporaryDirectory()
        var codes: [Int32: Int] = [:]
        var wrong: [String] = []
        for item in Self.corpus {
            let io = TestConsole(stdinBytes: item.body, environment: ["XDG_CONFIG_HOME": home.path("config")])
            let status = await io.run(arguments)
            codes[status, default: 0] += 1
            let clear = io.stderr.hasPrefix("Error: ") && io.stderr.count < 2000 && !io.stderr.contains("Fatal error")
            if status == 65 ? !clear : status != 0 {
                wrong.append("\(item): exit \(status) \(io.stderr.prefix(120))")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        print(
            "RELIABILITY hostile-cli \(arguments.joined(separator: " ")): \(Self.corpus.count) bodies, exits \(codes.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " "))"
        )
    }

    @Test func theBuiltBinaryNeverCrashesOnASample() throws {
        let home = try TemporaryDirectory()
        // Every 8th body through the real process: a trap would show as a signal, not exit 65.
        for item in Self.corpus.enumerated().filter({ $0.offset % 8 == 0 }).map(\.element) {
            for arguments in [["price"], ["order", "--dry-run"]] {
                let result = try ProcessRunner.run(
                    ProcessRunner.cupcakeExecutable, arguments, stdin: item.body,
                    environment: ["XDG_CONFIG_HOME": home.path("config")])
                #expect(
                    result.status == 0 || result.status == 65,
                    "\(item) \(arguments): \(result.status) \(result.stderr.prefix(200))")
                #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
            }
        }
    }
}
