import CupcakeServer
import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake serve` as a real child process: restarts, the API key, signals.
@Suite struct ServeProcessTests {
    static let order =
        #"{"type":3,"quantity":3,"extraFrosting":true,"addSprinkles":true,"name":"Bo","streetAddress":"9 Oak","city":"Reno","zip":"89501"}"#

    @Test func aRestartKeepsOrdersAndIdempotencyKeys() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"))
        let created = try RawHTTP.postOrder(
            port: server.port, json: Self.order, headers: ["Idempotency-Key": "restart-key"])
        #expect(created.status == 201)
        let id = try #require(created.json?["id"] as? String)
        #expect(server.stop() == 0)

        try server.start()
        let fetched = try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)")
        #expect(fetched.status == 200)
        #expect((fetched.json?["data"] as? [String: Any])?["costCents"] as? Int == 1200)
        let replay = try RawHTTP.postOrder(
            port: server.port, json: Self.order, headers: ["Idempotency-Key": "restart-key"])
        #expect(replay.status == 201)
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(replay.json?["id"] as? String == id)
        server.stop()
    }

    @Test func anOrderAnswered201SurvivesKill9() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"))
        let created = try RawHTTP.postOrder(port: server.port, json: Self.order)
        let id = try #require(created.json?["id"] as? String)
        server.kill9()
        try server.start()
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/\(id)").status == 200)
        server.stop()
    }

    /// `cupcake serve` becomes `cupcake-server` (execv, same process) with the signal mask the
    /// client started with, not the nearly-full one of the pool thread that ran the command:
    /// SIGHUP still ends it, as it ends any program whose terminal goes away. Started from a
    /// mask-clearing wrapper, as a shell would start it (this test process's threads block
    /// signals, and a child inherits that).
    @Test func theServerStartsAsCupcakeServerWithNoSignalBlocked() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path("serve.log")
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            ProcessRunner.cupcakeExecutable.path, "serve", "--port", "0", "--quiet", "--database",
            directory.path("orders.sqlite"),
        ]
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("listening on") {
            usleep(20_000)
        }
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        #expect(status.contains("Name:\tcupcake-server"), "\(status.prefix(200))")
        #expect(status.contains("SigBlk:\t0000000000000000"), "\(status)")
        kill(process.processIdentifier, SIGHUP)
        let ended = Date().addingTimeInterval(10)
        while process.isRunning, Date() < ended { usleep(20_000) }
        #expect(!process.isRunning, "SIGHUP ended it")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGHUP)
    }

    @Test func theAPIKeyGuardsAPIButNotHealthz() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--api-key", "s3cret"])
        let missing = try RawHTTP.postOrder(port: server.port, json: Self.order)
        #expect(missing.status == 401)
        #expect(missing.headers["content-type"] == "application/problem+json")
        #expect(missing.headers["www-authenticate"] == #"ApiKey header="x-api-key""#)
        let wrong = try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["x-api-key": "nope"])
        #expect(wrong.status == 401)
        let right = try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["x-api-key": "s3cret"])
        #expect(right.status == 201)
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/healthz").status == 200)
        #expect(try RawHTTP.request(port: server.port, method: "GET", path: "/api/cupcakes/1").status == 401)
        server.stop()
    }

    /// A key in a file only its owner may read; a key given as a flag works but is warned
    /// about, since every local user can read it in /proc/PID/cmdline.
    @Test func keysComeFromFilesOnlyTheirOwnerMayRead() throws {
        let directory = try TemporaryDirectory()
        let appFile = directory.path("app.key")
        let staffFile = directory.path("staff.key")
        try "app-secret\n".write(toFile: appFile, atomically: true, encoding: .utf8)
        try " staff-secret \n".write(toFile: staffFile, atomically: true, encoding: .utf8)
        chmod(appFile, 0o600)
        chmod(staffFile, 0o644)
        let refused = try ProcessRunner.cupcake([
            "serve", "--port", "0", "--database", directory.path("refused.sqlite"), "--api-key-file", appFile,
            "--staff-key-file", staffFile,
        ])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("mode 0644"), "\(refused.stderr)")
        #expect(refused.stderr.contains("chmod 600"), "\(refused.stderr)")

        chmod(staffFile, 0o400)
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--api-key-file", appFile, "--staff-key-file", staffFile])
        #expect(
            try RawHTTP.postOrder(port: server.port, json: Self.order, headers: ["x-api-key": "app-secret"]).status
                == 201)
        let list = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/cupcakes", headers: ["x-api-key": "staff-secret"])
        #expect(list.status == 200)
        #expect(!server.log.contains("warning:"), "\(server.log)")
        server.stop()

        let flagged = try ServerProcess(databasePath: directory.path("flag.sqlite"), arguments: ["--api-key", "k1"])
        #expect(flagged.log.contains("warning: --api-key puts the key in the command line"), "\(flagged.log)")
        flagged.stop()

        let both = try ProcessRunner.cupcake([
            "serve", "--port", "0", "--database", directory.path("both.sqlite"), "--api-key", "x", "--api-key-file",
            appFile,
        ])
        #expect(both.status == 64)
    }

    @Test func theAPIKeyCanComeFromTheEnvironmentOrAConfigFile() throws {
        let directory = try TemporaryDirectory()
        let fromEnvironment = try ServerProcess(
            databasePath: directory.path("a.sqlite"), environment: ["CUPCAKE_API_KEY": "from-env"])
        #expect(try RawHTTP.postOrder(port: fromEnvironment.port, json: Self.order).status == 401)
        #expect(
            try RawHTTP.postOrder(port: fromEnvironment.port, json: Self.order, headers: ["x-api-key": "from-env"])
                .status == 201)
        fromEnvironment.stop()

        let config = directory.path("server.json")
        try Data(#"{"apiKey": "from-file", "idleTimeoutSeconds": 5}"#.utf8).write(to: URL(fileURLWithPath: config))
        let fromFile = try ServerProcess(databasePath: directory.path("b.sqlite"), arguments: ["--config", config])
        #expect(
            try RawHTTP.postOrder(port: fromFile.port, json: Self.order, headers: ["x-api-key": "from-file"]).status
                == 201)
        fromFile.stop()
    }

    @Test func aSecondServerOnTheSameDatabaseIsRefusedAndTheFirstKeepsServing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let first = try ServerProcess(databasePath: path)
        #expect(try RawHTTP.postOrder(port: first.port, json: Self.order).status == 201)
        // The server holds its database exclusively (SQLite's unix-excl VFS).
        let second = try ProcessRunner.cupcake(["serve", "--port", "0", "--database", path])
        #expect(second.status == 74)
        #expect(second.stderr.contains("in use by another process"))
        #expect(try RawHTTP.postOrder(port: first.port, json: Self.order).status == 201)
        #expect(first.stop() == 0)
    }

    @Test func aBrokenConfigFileExits78NamingTheFile() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path("server.json")
        try Data(#"{"port": "eighty"}"#.utf8).write(to: URL(fileURLWithPath: config))
        let result = try ProcessRunner.cupcake(["serve", "--config", config, "--database", directory.path("x.sqlite")])
        #expect(result.status == 78)
        #expect(result.stderr.contains(config))
        #expect(result.stderr.contains("'port'"))
    }

    @Test func sigtermFinishesTheRequestInFlightThenExits0() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"))
        let body = Data(Self.order.utf8)
        let socket = try TestSocket(port: server.port)
        try socket.send(
            Data(
                "POST /api/cupcakes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: \(body.count)\r\n\r\n"
                    .utf8)
                + body.prefix(10))
        usleep(200_000)
        guard let pid = server.processID else { throw TestSocketError(message: "no pid") }
        kill(pid, SIGTERM)
        usleep(200_000)
        try socket.send(body.dropFirst(10))
        let response = RawHTTP.parse(socket.receiveAll(deadline: Date().addingTimeInterval(10)))
        #expect(response.status == 201)
        #expect(server.stop() == 0)
        #expect(server.log.contains("SIGTERM received"))
        #expect(server.log.contains("stopped"))
        // The log has one line per request with method, path, status, duration and request id.
        #expect(server.log.contains("POST /api/cupcakes 201"))
        #expect(server.log.contains("request_id="))
    }

    @Test func aPathCannotForgeALineInTheAccessLog() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"))
        let response = try RawHTTP.request(
            port: server.port, method: "GET", path: "/api/x%0A2026-12-02T10:00:00.000Z%20GET")
        #expect(response.status == 404)
        let requestID = try #require(response.headers["request-id"])
        #expect(server.stop() == 0)
        let lines = server.log.split(separator: "\n")
        let line = try #require(lines.first { $0.contains(requestID) })
        #expect(line.contains(#" GET /api/x\x0a2026-12-02T10:00:00.000Z\x20GET 404 "#))
        #expect(!lines.contains { $0.hasPrefix("2026-12-02T10:00:00.000Z") })
    }

    @Test func aPortInUseIsAClearError() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"))
        let result = try ProcessRunner.cupcake(
            ["serve", "--port", String(server.port), "--database", directory.path("other.sqlite")])
        #expect(result.status == 69)
        #expect(result.stderr.contains("Address already in use"))
        server.stop()
    }
}

@Suite struct ServerConfigurationTests {
    @Test func theDefaultsEqualTheCommittedServerConfig() throws {
        let committed = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Config/server.json")
        var configuration = ServerConfiguration()
        configuration.port = 1
        configuration.idleTimeoutSeconds = 99
        configuration.pinThreads = false
        configuration.accessLog = false
        try configuration.apply(fileContents: Data(contentsOf: committed))
        #expect(configuration == ServerConfiguration())
    }

    @Test(
        "A switch takes true or false; null leaves the default",
        arguments: [
            (#"{"pinThreads": false}"#, false, nil),
            (#"{"pinThreads": null}"#, true, nil),
            (#"{"pinThreads": "no"}"#, true, "'pinThreads' must be true or false"),
            (#"{"pinThreads": 0}"#, true, "'pinThreads' must be true or false"),
            (#"{"accessLog": 1}"#, true, "'accessLog' must be true or false"),
        ] as [(String, Bool, String?)])
    func switches(json: String, pinThreads: Bool, expectedError: String?) {
        var configuration = ServerConfiguration()
        do {
            try configuration.apply(fileContents: Data(json.utf8))
            #expect(expectedError == nil)
            #expect(configuration.pinThreads == pinThreads)
        } catch {
            #expect(error.message == expectedError)
        }
    }

    @Test func theWebhookSettingsAreRead() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(
            fileContents: Data(
                #"{"webhookAllowPrivateAddresses": true, "webhookRetryScale": 0.001, "webhookDisableAfterSeconds": 60, "webhookTimeoutSeconds": 3, "webhookConnectTimeoutSeconds": 1, "webhookWorkers": 2, "webhookHistoryDays": 7, "eventHeartbeatSeconds": 2.5}"#
                    .utf8))
        var expected = WebhookSettings()
        expected.allowPrivateAddresses = true
        expected.retryScale = 0.001
        expected.disableAfterSeconds = 60
        expected.timeoutSeconds = 3
        expected.connectTimeoutSeconds = 1
        expected.workers = 2
        expected.historyDays = 7
        #expect(configuration.webhooks == expected)
        #expect(configuration.eventHeartbeatSeconds == 2.5)
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(fileContents: Data(#"{"webhookRetryScale": 0}"#.utf8))
        }
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(fileContents: Data(#"{"webhookWorkers": 0}"#.utf8))
        }
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(fileContents: Data(#"{"webhookHistoryDays": 0}"#.utf8))
        }
    }
}
