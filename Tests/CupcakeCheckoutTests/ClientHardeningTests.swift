import CupcakeTestSupport
import Foundation
import Testing

/// What the client never does, whatever a server answers: follow a redirect (with the key or
/// the order), read an answer without end, print a server's escape sequences, print a URL's
/// password; and the files it writes are private. Through the built binary.
@Suite struct ClientHardeningTests {
    static let orderArguments = [
        "order", "--type", "2", "--qty", "5", "--name", "Taylor", "--street", "1 Main St", "--city", "Nashville",
        "--zip", "37201",
    ]

    static func environment(_ directory: TemporaryDirectory) -> [String: String] {
        ["XDG_CONFIG_HOME": directory.path("config"), "XDG_DATA_HOME": directory.path("data")]
    }

    /// Also a check that answer headers are read whatever their case.
    @Test(arguments: [(301, "Location"), (302, "location"), (307, "LOCATION"), (308, "lOcAtIoN")])
    func aRedirectIsNeverFollowed(status: Int, header: String) throws {
        let directory = try TemporaryDirectory()
        let elsewhere = try ScriptedEndpoint([.echo])
        let endpoint = try ScriptedEndpoint([
            ScriptedEndpoint.Answer(status: status, body: "{}", headers: [(header, elsewhere.endpoint)])
        ])
        let result = try ProcessRunner.cupcake(
            Self.orderArguments + ["--endpoint", endpoint.endpoint, "--api-key", "secret-app-key", "--retries", "2"],
            environment: Self.environment(directory))
        #expect(result.status == 76, "\(result.stderr)")
        #expect(result.stderr.contains("redirecting to \(elsewhere.endpoint)"))
        #expect(endpoint.requests.count == 1)  // not retried either
        #expect(elsewhere.requests.isEmpty)  // neither the key nor the order went there
    }

    @Test func anAnswerPastTheLimitIsNotRead() throws {
        let directory = try TemporaryDirectory()
        let huge = #"{"padding":""# + String(repeating: "x", count: 2 << 20) + #""}"#
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 201, body: huge)])
        let result = try ProcessRunner.cupcake(
            Self.orderArguments + ["--endpoint", endpoint.endpoint], environment: Self.environment(directory))
        #expect(result.status == 76)
        #expect(result.stderr.contains("larger than 1 MiB"))
        // A list page may be larger (16 MiB), but not without end.
        let list = try ScriptedEndpoint([
            ScriptedEndpoint.Answer(
                status: 200,
                body: #"{"page":1,"data":[],"padding":""# + String(repeating: "y", count: 17 << 20) + #""}"#)
        ])
        let listed = try ProcessRunner.cupcake(
            ["orders", "list", "--endpoint", list.endpoint], environment: Self.environment(directory))
        #expect(listed.status == 76)
        #expect(listed.stderr.contains("larger than 16 MiB"))
    }

    @Test func escapeSequencesFromTheServerArePrintedEscaped() throws {
        let directory = try TemporaryDirectory()
        let hostile = #"{"detail":"bad \u001b]0;owned\u0007\u001b[31mred\u202e txet"}"#
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 422, body: hostile)])
        let result = try ProcessRunner.cupcake(
            Self.orderArguments + ["--endpoint", endpoint.endpoint], environment: Self.environment(directory))
        #expect(result.status == 65)
        #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
        #expect(result.stderr.contains(#"\x1b]0;owned\x07\x1b[31mred\u{202e} txet"#))
        // In a table and in --json alike.
        let name = #"Eve\u001b[2J\u001b[H"#
        let page =
            #"{"page":1,"per_page":6,"total":1,"total_pages":1,"data":[{"id":"1","name":""# + name
            + #"","type":1,"quantity":3,"costCents":650,"createdAt":"2026-12-02T10:00:00.000Z","next":"\u009b31m"}]}"#
        for arguments in [["orders", "list"], ["orders", "list", "--json"]] {
            let list = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 200, body: page)])
            let listed = try ProcessRunner.cupcake(
                arguments + ["--endpoint", list.endpoint], environment: Self.environment(directory))
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(!listed.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B }, "\(arguments)")
        }
    }

    @Test func aPasswordInTheEndpointIsNeverPrinted() throws {
        let directory = try TemporaryDirectory()
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 503, body: #"{"detail":"down"}"#)])
        let withPassword = endpoint.endpoint.replacingOccurrences(of: "http://", with: "http://shop:s3cret-pw@")
        for arguments in [
            Self.orderArguments + ["--retries", "0"], Self.orderArguments + ["--dry-run"], ["orders", "show", "7"],
        ] {
            let result = try ProcessRunner.cupcake(
                arguments + ["--endpoint", withPassword], environment: Self.environment(directory))
            #expect(!(result.stdout + result.stderr).contains("s3cret-pw"), "\(arguments)")
        }
        let dead = try ProcessRunner.cupcake(
            Self.orderArguments + ["--retries", "0", "--endpoint", "http://shop:s3cret-pw@127.0.0.1:1/api/cupcakes"],
            environment: Self.environment(directory))
        #expect(dead.status == 69)
        #expect(dead.stderr.contains("http://127.0.0.1:1/api/cupcakes"))
        #expect(!dead.stderr.contains("s3cret-pw"))
    }

    @Test func keysReceiptsAddressesAndTheDatabaseAreCreatedPrivate() throws {
        let directory = try TemporaryDirectory()
        let environment = Self.environment(directory)
        try FileManager.default.createDirectory(atPath: directory.path("db"), withIntermediateDirectories: true)
        let server = try ServerProcess(
            databasePath: directory.path("db/orders.sqlite"),
            arguments: ["--quiet", "--api-key", "app", "--staff-key", "s"])
        let address = try ProcessRunner.cupcake(
            ["address", "set", "--name", "Ann", "--street", "2 Elm", "--city", "Austin", "--zip", "73301"],
            environment: environment)
        #expect(address.status == 0)
        let placed = try ProcessRunner.cupcake(
            ["order", "--type", "1", "--qty", "3", "--endpoint", "\(server.baseURL)/api/cupcakes", "--api-key", "app"],
            environment: environment)
        #expect(placed.status == 0, "\(placed.stderr)")
        func mode(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
        }
        #expect(mode(directory.path("config/cupcake/address.json")) == 0o600)
        #expect(mode(directory.path("data/cupcake/receipts.jsonl")) == 0o600)
        #expect(mode(directory.path("data/cupcake")) == 0o700)
        #expect(mode(directory.path("db/orders.sqlite")) == 0o600)
        #expect(mode(directory.path("db/orders.sqlite-wal")) == 0o600)
        #expect(server.stop() == 0)
    }

    @Test func theAppKeyReachesItsOwnOrdersThroughTheirReceipts() throws {
        let directory = try TemporaryDirectory()
        let environment = Self.environment(directory)
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--quiet", "--api-key", "app", "--staff-key", "s"])
        let endpoint = ["--endpoint", "\(server.baseURL)/api/cupcakes"]
        let mine = try ProcessRunner.cupcake(
            Self.orderArguments + endpoint + ["--api-key", "app"], environment: environment)
        #expect(mine.status == 0)
        // Another machine's order (no receipt here).
        let theirs = try RawHTTP.postOrder(port: server.port, json: HostileCorpus.valid, headers: ["x-api-key": "app"])
        let theirID = try #require(theirs.json?["id"] as? String)

        let shown = try ProcessRunner.cupcake(
            ["orders", "show", "1"] + endpoint + ["--api-key", "app"], environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Taylor"))
        let other = try ProcessRunner.cupcake(
            ["orders", "show", theirID] + endpoint + ["--api-key", "app"], environment: environment)
        #expect(other.status == 66)
        let listed = try ProcessRunner.cupcake(
            ["orders", "list"] + endpoint + ["--api-key", "app"], environment: environment)
        #expect(listed.status == 0)
        #expect(listed.stderr.contains("placed from this machine"))
        #expect(listed.stdout.contains("Taylor") && !listed.stdout.contains(" \(theirID) "))
        let staff = try ProcessRunner.cupcake(
            ["orders", "list"] + endpoint + ["--staff-key", "s"], environment: environment)
        #expect(staff.status == 0)
        #expect(staff.stdout.contains("(2 orders)"))
        #expect(server.stop() == 0)
    }
}
