import Foundation

/// nginx in front of several `cupcake serve` instances, as `scripts/cluster` runs it: round robin,
/// and a request whose instance fails (refused, reset, timed out) tried on the next one, POSTs
/// included (`non_idempotent`: every POST carries an Idempotency-Key). Stopped when released.
public final class NginxProcess: @unchecked Sendable {
    // Safe: used from one test at a time.
    private let directory: TemporaryDirectory
    private var process: Process?
    /// The port it listens on, on 127.0.0.1.
    public private(set) var port = 0

    /// Writes the configuration and starts nginx in the foreground (waits ≤ 10 s for it).
    public convenience init(upstreamPorts: [Int]) throws {
        try self.init { port, directory in
            try Self.configuration(port: port, upstreams: upstreamPorts.map { "127.0.0.1:\($0)" }, directory: directory)
        }
    }

    /// nginx as an origin server that answers every request it accepts with 200 (and the
    /// method and path), for comparing how it reads a request with how `cupcake serve` does.
    public static func origin() throws -> NginxProcess {
        try NginxProcess { port, directory in
            """
            daemon off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            events { worker_connections 256; }
            http {
                access_log off;
                client_body_temp_path \(directory)/body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
                server {
                    listen 127.0.0.1:\(port);
                    location / { return 200 "ok $request_method $uri\\n"; }
                }
            }

            """
        }
    }

    /// Starts nginx with the configuration `configure` writes for a port and a folder of its own.
    public init(configure: (_ port: Int, _ directory: String) throws -> String) throws {
        directory = try TemporaryDirectory()
        var failure = ""
        for _ in 0..<5 {
            port = try FreePort.next()
            let configuration = try configure(port, directory.url.path)
            try configuration.write(toFile: directory.path("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            process.arguments = [
                "-p", directory.url.path, "-c", directory.path("nginx.conf"), "-e", directory.path("error.log"),
            ]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            self.process = process
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, process.isRunning {
                if (try? TestSocket(port: port, timeout: 1)) != nil { return }
                usleep(20_000)
            }
            failure = (try? String(contentsOfFile: directory.path("error.log"), encoding: .utf8)) ?? ""
            stop()
        }
        throw TestSocketError(message: "nginx did not start: \(failure)")
    }

    deinit { stop() }

    /// Config/nginx-cluster.conf, the configuration `scripts/cluster` writes, filled in.
    public static func configuration(port: Int, upstreams: [String], directory: String) throws -> String {
        let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Config/nginx-cluster.conf")
        return try String(contentsOf: template, encoding: .utf8)
            .replacingOccurrences(of: "@DIR@", with: directory)
            .replacingOccurrences(of: "@PORT@", with: String(port))
            .replacingOccurrences(
                of: "@UPSTREAMS@",
                with: upstreams.map { "        server \($0) max_fails=1 fail_timeout=2s;" }.joined(separator: "\n"))
    }

    /// Stops nginx (SIGQUIT: finish what is in flight) and waits for it, at most 10 s.
    public func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGQUIT)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
