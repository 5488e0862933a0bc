import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake serve` started with descriptors 0, 1 and 2 closed: none of its sockets or files may
/// get those numbers, or what it writes to standard error would reach them.
@Suite struct StandardDescriptorTests {
    @Test func aServerStartedWithoutStandardDescriptorsKeepsItsLogOutOfConnections() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 ? getsockname(listener, $0, &length) : -1
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        close(listener)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // The access log is on: each request writes a line to standard error.
        process.arguments = [
            "-c", "exec 0<&- 1>&- 2>&- \"$0\" serve --port \(port) --no-pin-threads --database \"$1\"",
            ProcessRunner.cupcakeExecutable.path, path,
        ]
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        var healthy = false
        for _ in 0..<200 where !healthy {  // at most 10 s
            healthy = (try? RawHTTP.request(port: port, method: "GET", path: "/healthz").status) == 200
            if !healthy { usleep(50_000) }
        }
        #expect(healthy)
        for number in 0..<5 {
            let body = HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: "Closed \(number)")
            let created = try RawHTTP.postOrder(port: port, json: body)
            #expect(created.status == 201)
            #expect(created.json?["id"] != nil, "not JSON: \(created.text)")
            let id = created.json?["id"] as? String ?? ""
            let read = try RawHTTP.request(port: port, method: "GET", path: "/api/cupcakes/\(id)")
            #expect(read.status == 200)
            #expect(!read.text.contains("request_id="))
        }
        for descriptor in 0...2 {
            let target = try FileManager.default.destinationOfSymbolicLink(
                atPath: "/proc/\(process.processIdentifier)/fd/\(descriptor)")
            #expect(target == "/dev/null")
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
