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

    struct StartUp: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var loads: [String]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let heavyLibraries = ["libcurl", "libpq", "libmicrohttpd", "libsqlite3", "libcrypto", "libssl"]

    static let startUps: [StartUp] = [
        StartUp(arguments: ["price", "--type", "2"], loads: []),
        StartUp(arguments: ["--help"], loads: []),
        StartUp(arguments: ["completion", "bash"], loads: []),
        StartUp(arguments: ["serve", "--help"], loads: []),
        StartUp(
            arguments: ["order", "--dry-run", "--json", "--name", "a", "--street", "b", "--city", "c", "--zip", "1"],
            loads: []),
        // Sending loads libcurl (and what it needs), and none of the server's libraries.
        StartUp(
            arguments: [
                "order", "--name", "a", "--street", "b", "--city", "c", "--zip", "1", "--retries", "0",
                "--endpoint", "http://127.0.0.1:1/api/cupcakes",
            ], loads: ["libcurl"]),
    ]

    /// A command loads only the libraries it needs (what the dynamic loader reports it loaded).
    @Test(arguments: startUps) func aCommandLoadsOnlyWhatItNeeds(_ example: StartUp) throws {
        let result = try ProcessRunner.cupcake(example.arguments, environment: ["LD_DEBUG": "files"])
        let loaded = result.stderr.split(separator: "\n").filter { $0.contains("file=") }
            .compactMap { line in line.split(separator: "file=").last?.split(separator: " ").first.map(String.init) }
        #expect(!loaded.isEmpty, "LD_DEBUG reported nothing: \(result.stderr)")
        for library in Self.heavyLibraries {
            // libcurl brings OpenSSL with it; only what no command of the client needs is checked.
            if example.loads.contains("libcurl") && ["libcrypto", "libssl"].contains(library) { continue }
            let wanted = example.loads.contains(library)
            #expect(loaded.contains { $0.hasPrefix(library) } == wanted, "\(library): \(loaded)")
        }
        if !example.loads.isEmpty {
            // Not the server's: libpq and libmicrohttpd are cupcake-server's alone.
            #expect(!loaded.contains { $0.hasPrefix("libpq") || $0.hasPrefix("libmicrohttpd") })
        }
        if ProcessRunner.testsReleaseClient {
            // The release client carries its C++ runtime (Linking/libstdc++.so), gcc's unwinder
            // (-static-libgcc) and jansson (Linking/libjansson.so); a debug build loads the first
            // two through the dynamic Swift runtime, and jansson as a library.
            #expect(
                !loaded.contains {
                    $0.hasPrefix("libstdc++") || $0.hasPrefix("libgcc_s") || $0.hasPrefix("libjansson")
                },
                "\(loaded)")
        }
    }

    /// The release client links no Foundation (FoundationEssentials only): neither
    /// CoreFoundation's initializer nor ICU's collation is in the executable. (A debug build
    /// loads its libraries dynamically, so only the release build is checked.)
    @Test(.enabled(if: ProcessRunner.testsReleaseClient))
    func theReleaseClientCarriesNoFoundation() throws {
        let bytes = try Data(contentsOf: ProcessRunner.cupcakeExecutable)
        for marker in ["__CFInitialize", "ucol_open"] {
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the release client")
        }
        #expect(bytes.range(of: Data("json_loadb".utf8)) != nil, "jansson is linked in")
    }

    /// A one-shot order runs on the main thread alone (`CallingThreadExecutor`): no thread is
    /// started, not even while the request is out, and the order is placed.
    @Test func aOneShotOrderRunsOnTheMainThreadAlone() throws {
        let endpoint = try ScriptedEndpoint([ScriptedEndpoint.Answer(status: 201, delay: 1)])
        let directory = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": directory.path("config"), "XDG_DATA_HOME": directory.path("data")]
        var threads: [Int] = []
        let result = try ProcessRunner.run(
            ProcessRunner.cupcakeExecutable,
            ["order", "--name", "Taylor", "--street", "1 Main St", "--city", "Nashville", "--zip", "37201"]
                + ["--retries", "0", "--endpoint", endpoint.endpoint],
            environment: environment
        ) { pid in
            // While the answer is held back (one second), count the process's threads.
            for _ in 0..<200 where endpoint.requests.isEmpty { usleep(5_000) }
            let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
            threads.append(tasks?.count ?? 0)
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(endpoint.requests.count == 1)
        #expect(threads == [1], "threads while the request was out: \(threads)")
    }

    /// `cupcake serve` runs in cupcake-server; a `cupcake` copied alone says what is missing.
    @Test func serveWithoutCupcakeServerSaysSo() throws {
        let directory = try TemporaryDirectory()
        let alone = URL(fileURLWithPath: directory.path("cupcake"))
        try FileManager.default.copyItem(at: ProcessRunner.cupcakeExecutable, to: alone)
        let result = try ProcessRunner.run(alone, ["serve", "--port", "0"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 69)
        #expect(
            result.stderr.contains("runs in cupcake-server, which is not beside cupcake nor on PATH"),
            "\(result.stderr)")
        // Its own work (help, a usage error) needs no cupcake-server.
        #expect(try ProcessRunner.run(alone, ["serve", "--help"]).status == 0)
        #expect(try ProcessRunner.run(alone, ["serve", "--bogus"]).status == 64)
    }
}
