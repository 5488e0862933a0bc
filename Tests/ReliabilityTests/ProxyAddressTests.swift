import CupcakeTestSupport
import Foundation
import Testing

/// Behind a trusted proxy the client is the rightmost X-Forwarded-For address that is not a
/// trusted proxy, with every line of the field read as one list (RFC 9110 §5.3). HAProxy's
/// `option forwardfor` appends a line of its own after the client's; nginx's
/// `$proxy_add_x_forwarded_for` extends the client's line. Behind either, an address a client
/// writes into X-Forwarded-For changes nothing about which address the limits count.
@Suite(.serialized) struct ProxyAddressTests {
    enum Proxy: String, CaseIterable, Sendable {
        case haproxy, nginx
    }

    /// HAProxy from Debian's packages, in the foreground, in front of one upstream.
    final class HAProxyProcess: @unchecked Sendable {
        // Safe: used from one test at a time.
        let directory: TemporaryDirectory
        let process = Process()
        let port: Int

        init(upstream: Int) throws {
            directory = try TemporaryDirectory()
            port = try FreePort.next()
            let configuration = """
                global
                    maxconn 256
                defaults
                    mode http
                    timeout connect 2s
                    timeout client 10s
                    timeout server 10s
                frontend web
                    bind 127.0.0.1:\(port)
                    option forwardfor
                    default_backend cupcake
                backend cupcake
                    server one 127.0.0.1:\(upstream)

                """
            let file = directory.path("haproxy.cfg")
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
            process.arguments = ["-db", "-f", file]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, process.isRunning {
                if (try? TestSocket(port: port, timeout: 1)) != nil { return }
                usleep(20_000)
            }
            throw TestSocketError(message: "haproxy did not start")
        }

        deinit {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
    }

    static let appKey = "app-key-proxy"
    static let staffKey = "staff-key-proxy"

    /// A server that trusts the proxy on 127.0.0.1, with small limits, behind `proxy`; runs
    /// `body` with the proxy's port.
    static func behind(_ proxy: Proxy, _ body: (Int) throws -> Void) throws {
        let server = try TestServer {
            $0.apiKey = appKey
            $0.staffKey = staffKey
            $0.trustedProxies = ["127.0.0.1"]
            $0.postsPerSecondPerClient = 0.01
            $0.postBurstPerClient = 5
            $0.failedKeysPerMinute = 5
        }
        switch proxy {
        case .haproxy:
            let haproxy = try HAProxyProcess(upstream: server.port)
            try body(haproxy.port)
        case .nginx:
            let nginx = try NginxProcess(upstreamPorts: [server.port])
            try body(nginx.port)
        }
    }

    @Test(arguments: Proxy.allCases)
    func aForgedAddressDoesNotGetPastTheOrderLimit(proxy: Proxy) throws {
        try Self.behind(proxy) { port in
            // Eight orders from one client, each claiming another address: five get through.
            let statuses = try (0..<8).map { number in
                try RawHTTP.postOrder(
                    port: port, json: HostileCorpus.valid,
                    headers: ["x-api-key": Self.appKey, "X-Forwarded-For": "10.9.8.\(number)"], from: "127.0.0.2"
                ).status
            }
            #expect(statuses.count { $0 == 201 } == 5, "\(statuses)")
            #expect(statuses.suffix(3).allSatisfy { $0 == 429 }, "\(statuses)")
            // Another client is not held back by that one.
            let other = try RawHTTP.postOrder(
                port: port, json: HostileCorpus.valid, headers: ["x-api-key": Self.appKey], from: "127.0.0.3")
            #expect(other.status == 201)
        }
    }

    @Test(arguments: Proxy.allCases)
    func forgedAddressesNeitherEscapeTheKeyLimitNorLockOutTheStaff(proxy: Proxy) throws {
        try Self.behind(proxy) { port in
            // Wrong keys, each claiming another address, then the staff's own: the limit counts
            // the sender, so it stops the guesser...
            let guesses = try (0..<12).map { number in
                try RawHTTP.request(
                    port: port, method: "GET", path: "/api/cupcakes",
                    headers: ["x-api-key": "guess-\(number)", "X-Forwarded-For": "10.1.1.\(number), 127.0.0.4"],
                    from: "127.0.0.2"
                ).status
            }
            #expect(guesses.contains(429), "\(guesses)")
            // ...and the staff, at 127.0.0.4, whose address the guesser wrote, still gets in.
            let staff = try RawHTTP.request(
                port: port, method: "GET", path: "/api/cupcakes", headers: ["x-api-key": Self.staffKey],
                from: "127.0.0.4")
            #expect(staff.status == 200)
        }
    }
}
