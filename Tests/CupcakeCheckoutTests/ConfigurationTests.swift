import CupcakeCheckout
import CupcakeTestSupport
import Foundation
import Testing

@Suite struct ConfigurationTests {
    static func write(_ json: String, to path: String) throws {
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func theDefaultsEqualTheCommittedConfigFile() throws {
        let committed = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Config/cupcake.json").path
        var fromFile = CheckoutConfiguration()
        fromFile.endpoint = URL(string: "http://example.invalid/x") ?? fromFile.endpoint
        fromFile.retries = 9
        fromFile.timeoutSeconds = 99
        try fromFile.apply(file: committed)
        #expect(fromFile == CheckoutConfiguration())
    }

    @Test func precedenceIsFlagsThenEnvironmentThenFileThenDefaults() throws {
        let home = try TemporaryDirectory()
        let directory = home.path("config/cupcake")
        try Self.write(
            #"{"endpoint": "http://file.test/api/cupcakes", "apiKey": "file-key", "timeoutSeconds": 2.5, "retries": 4, "headers": {"x-extra": "1"}}"#,
            to: directory + "/config.json")

        let fileOnly = try CheckoutConfiguration.resolve(
            flags: .init(), environment: [:], userConfigDirectory: directory)
        #expect(fileOnly.endpoint.absoluteString == "http://file.test/api/cupcakes")
        #expect(fileOnly.apiKey == "file-key")
        #expect(fileOnly.timeoutSeconds == 2.5)
        #expect(fileOnly.retries == 4)
        #expect(fileOnly.headers == ["x-extra": "1"])

        let environment: Environment = [
            "CUPCAKE_ENDPOINT": "http://env.test/api/cupcakes", "CUPCAKE_API_KEY": "env-key",
        ]
        let withEnvironment = try CheckoutConfiguration.resolve(
            flags: .init(), environment: environment, userConfigDirectory: directory)
        #expect(withEnvironment.endpoint.absoluteString == "http://env.test/api/cupcakes")
        #expect(withEnvironment.apiKey == "env-key")
        #expect(withEnvironment.retries == 4)

        let withFlags = try CheckoutConfiguration.resolve(
            flags: .init(
                endpoint: "http://flag.test/api/cupcakes", apiKey: "flag-key", timeoutSeconds: 0.5, retries: 0),
            environment: environment, userConfigDirectory: directory)
        #expect(withFlags.endpoint.absoluteString == "http://flag.test/api/cupcakes")
        #expect(withFlags.apiKey == "flag-key")
        #expect(withFlags.timeoutSeconds == 0.5)
        #expect(withFlags.retries == 0)

        let nothing = try CheckoutConfiguration.resolve(
            flags: .init(), environment: [:], userConfigDirectory: home.path("empty"))
        #expect(nothing == CheckoutConfiguration())
    }

    @Test func configFileChoiceIsFlagThenEnvironmentThenXDG() throws {
        let home = try TemporaryDirectory()
        let directory = home.path("config/cupcake")
        try Self.write(#"{"retries": 1}"#, to: directory + "/config.json")
        try Self.write(#"{"retries": 2}"#, to: home.path("env.json"))
        try Self.write(#"{"retries": 3}"#, to: home.path("flag.json"))
        let environment: Environment = ["CUPCAKE_CONFIG": home.path("env.json")]
        #expect(
            try CheckoutConfiguration.resolve(flags: .init(), environment: [:], userConfigDirectory: directory).retries
                == 1)
        #expect(
            try CheckoutConfiguration.resolve(flags: .init(), environment: environment, userConfigDirectory: directory)
                .retries == 2)
        #expect(
            try CheckoutConfiguration.resolve(
                flags: .init(config: home.path("flag.json")), environment: environment, userConfigDirectory: directory
            ).retries == 3)
    }

    @Test(arguments: [
        ("{", "not valid JSON"),
        ("{\n  \"retries\": 2,\n}", "not valid JSON (line 3, column 1"),
        (#"{"retries": 2.5}"#, "'retries'"),
        (#"{"retries": true}"#, "'retries'"),
        (#"{"timeoutSeconds": 99999999999999999999}"#, "too big integer"),
        ("[]", "JSON object"),
        (#"{"endpoint": 5}"#, "'endpoint'"),
        (#"{"endpoint": "ftp://x"}"#, "http://"),
        (#"{"retries": -1}"#, "'retries'"),
        (#"{"timeoutSeconds": "fast"}"#, "'timeoutSeconds'"),
        (#"{"headers": {"bad header": "x"}}"#, "bad header"),
        (#"{"endpiont": "http://x"}"#, "unknown key 'endpiont'"),
    ])
    func aBrokenConfigFileExits78NamingTheFileAndTheProblem(json: String, mentions: String) async throws {
        let home = try TemporaryDirectory()
        let path = home.path("broken.json")
        try Self.write(json, to: path)
        let io = TestConsole(environment: ["XDG_CONFIG_HOME": home.path("config")])
        let status = await io.run(CheckoutTests.orderArguments + ["--config", path])
        #expect(status == 78)
        #expect(io.stderr.contains(path))
        #expect(io.stderr.contains(mentions), "\(io.stderr)")
    }

    @Test func theReqresConfigSendsTheAPIKeyHeader() throws {
        let committed = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Config/reqres.json").path
        var configuration = CheckoutConfiguration()
        try configuration.apply(file: committed)
        #expect(configuration.endpoint.absoluteString == "https://reqres.in/api/cupcakes")
        #expect(configuration.headers["x-api-key"] != nil)
    }
}

@Suite struct SavedAddressTests {
    @Test func setShowClearRoundTripsThroughTheFile() async throws {
        let home = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": home.path("config")]
        let set = TestConsole(environment: environment)
        #expect(
            await set.run([
                "address", "set", "--name", " Ann ", "--street", "2 Elm", "--city", "Austin", "--zip", "73301",
            ]) == 0)
        let file = home.path("config/cupcake/address.json")
        let saved = try JSONDecoder().decode(SavedAddress.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(saved == SavedAddress(name: "Ann", streetAddress: "2 Elm", city: "Austin", zip: "73301"))

        let show = TestConsole(environment: environment)
        #expect(await show.run(["address", "show"]) == 0)
        #expect(show.stdout == "Ann\n2 Elm\nAustin 73301\n")

        let clear = TestConsole(environment: environment)
        #expect(await clear.run(["address", "clear"]) == 0)
        #expect(!FileManager.default.fileExists(atPath: file))
        let empty = TestConsole(environment: environment)
        #expect(await empty.run(["address", "show"]) == 0)
        #expect(empty.stdout.contains("No delivery address"))
    }

    @Test func anInvalidAddressIsNotSaved() async throws {
        let home = try TemporaryDirectory()
        let io = TestConsole(environment: ["XDG_CONFIG_HOME": home.path("config")])
        #expect(
            await io.run(["address", "set", "--name", "Ann", "--street", " ", "--city", "Austin", "--zip", ""]) == 65)
        #expect(io.stderr.contains("The address breaks 2 rules:"))
        #expect(io.stderr.contains("streetAddress must not be blank"))
        #expect(io.stderr.contains("zip must not be blank"))
        #expect(!FileManager.default.fileExists(atPath: home.path("config/cupcake/address.json")))
        // A field left out is a usage error that names every missing option.
        let missing = TestConsole(environment: ["XDG_CONFIG_HOME": home.path("config")])
        #expect(await missing.run(["address", "set", "--name", "x"]) == 64)
        #expect(
            missing.stderr.contains("Missing expected arguments '--street <street>', '--city <city>', '--zip <zip>'."))
        #expect(!FileManager.default.fileExists(atPath: home.path("config/cupcake/address.json")))
    }

    @Test func orderFillsOnlyTheMissingFieldsFromTheSavedAddress() async throws {
        let home = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": home.path("config")]
        _ = await TestConsole(environment: environment).run(
            ["address", "set", "--name", "Ann", "--street", "2 Elm", "--city", "Austin", "--zip", "73301"])
        let endpoint = try ScriptedEndpoint([.echo])
        let io = TestConsole(environment: environment)
        #expect(
            await io.run(["order", "--type", "1", "--qty", "4", "--name", "Bea", "--endpoint", endpoint.endpoint]) == 0)
        let sent =
            try JSONSerialization.jsonObject(with: Data(try #require(endpoint.requests.first).body)) as? [String: Any]
        #expect(sent?["name"] as? String == "Bea")
        #expect(sent?["city"] as? String == "Austin")
        #expect(sent?["zip"] as? String == "73301")
    }
}
