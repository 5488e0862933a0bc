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
    public init(upstreamPorts: [Int]) throws {
        directory = try TemporaryDirectory()
        var failure = ""
        for _ in 0..<5 {
            port = try FreePort.next()
            let configuration = Self.configuration(
                port: port, upstreams: upstreamPorts.map { "127.0.0.1:\($0)" }, directory: directory.url.path)
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

    /// The configuration `scripts/cluster` also writes (see there for each line's reason).
    public static func configuration(port: Int, upstreams: [String], directory: String) -> String {
        """
        daemon off;
        worker_processes 1;
        pid \(directory)/nginx.pid;
        error_log \(directory)/error.log warn;
        events { worker_connections 1024; }
        http {
            access_log off;
            client_body_temp_path \(directory)/body;
            proxy_temp_path \(directory)/proxy;
            fastcgi_temp_path \(directory)/fastcgi;
            uwsgi_temp_path \(directory)/uwsgi;
            scgi_temp_path \(directory)/scgi;
            upstream cupcake {
        \(upstreams.map { "        server \($0) max_fails=1 fail_timeout=2s;" }.joined(separator: "\n"))
                keepalive 64;
            }
            server {
                listen 127.0.0.1:\(port);
                location / {
                    proxy_pass http://cupcake;
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                    proxy_set_header Host $http_host;
                    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                    proxy_next_upstream error timeout non_idempotent;
                    proxy_next_upstream_tries 3;
                    proxy_connect_timeout 2s;
                    proxy_read_timeout 30s;
                }
            }
        }

        """
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
