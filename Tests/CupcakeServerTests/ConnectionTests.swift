import CupcakeServer
import CupcakeTestSupport
import Foundation
import Testing

/// Answers 200 to everything and records which worker thread served each path.
private final class WorkerRecorder: HTTPHandler, @unchecked Sendable {
    // Safe: `workers` is only touched while holding `lock`.
    private let lock = NSLock()
    private var workers: [String: pthread_t] = [:]

    var workerByPath: [String: pthread_t] { lock.withLock { workers } }

    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        lock.withLock { workers[request.path] = pthread_self() }
        respond(.json(200, Array(#"{"ok":true}"#.utf8)))
    }
}

/// Answers each request from another thread after a delay taken from its path
/// (`/later/<microseconds>/<tag>`), echoing the tag: some answers arrive before the worker's
/// next pass, some after it (the connection is then suspended and resumed).
private struct LateAnswers: HTTPHandler {
    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let parts = request.path.split(separator: "/")
        let micros = parts.count == 3 ? UInt32(parts[1]) ?? 0 : 0
        let tag = parts.last.map(String.init) ?? ""
        DispatchQueue.global().async {
            if micros > 0 { usleep(micros) }
            respond(.json(200, Array(#"{"tag":"\#(tag)"}"#.utf8)))
        }
    }
}

/// How connections reach libmicrohttpd's workers, and what happens at the connection limit.
@Suite struct ConnectionTests {
    private static func startServer(_ handler: WorkerRecorder, threads: Int, connections: Int = 1024) throws
        -> HTTPServer
    {
        var limits = HTTPServer.Limits()
        limits.threads = threads
        limits.connections = connections
        let server = HTTPServer(
            host: "127.0.0.1", port: 0, limits: limits, handler: handler,
            log: AccessLog(enabled: false, write: { _ in }))
        try server.start()
        return server
    }

    private static func get(_ path: String) -> Data { Data("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8) }

    @Test func connectionsOpenedAllAtOnceAreSpreadOverTheWorkers() throws {
        let recorder = WorkerRecorder()
        let server = try Self.startServer(recorder, threads: 2)
        defer { server.shutdown(grace: 1) }
        // Like wrk: open every connection first, then send on each and keep it open.
        let sockets = try (0..<16).map { _ in try TestSocket(port: server.port, timeout: 5) }
        for (index, socket) in sockets.enumerated() { try socket.send(Self.get("/c\(index)")) }
        for socket in sockets {
            #expect(socket.receiveResponse(deadline: Date().addingTimeInterval(10))?.status == 200)
        }
        let workers = recorder.workerByPath
        #expect(workers.count == 16)
        // Each connection's requests run on the worker that owns it; both workers own some.
        #expect(Set(workers.values).count == 2, "all 16 connections landed on one worker")
    }

    @Test func answersGivenLaterReachTheirOwnRequestsWhetherEarlyOrLate() throws {
        var limits = HTTPServer.Limits()
        limits.threads = 2
        let server = HTTPServer(
            host: "127.0.0.1", port: 0, limits: limits, handler: LateAnswers(),
            log: AccessLog(enabled: false, write: { _ in }))
        try server.start()
        defer { server.shutdown(grace: 1) }
        let sockets = try (0..<8).map { _ in try TestSocket(port: server.port, timeout: 5) }
        var wrong: [String] = []
        // 8 keep-alive connections, 25 rounds: delays from none to 20 ms.
        for round in 0..<25 {
            for (index, socket) in sockets.enumerated() {
                let delay = [0, 0, 50, 200, 1_000, 5_000, 20_000, 0][(round + index) % 8]
                try socket.send(Self.get("/later/\(delay)/r\(round)c\(index)"))
            }
            for (index, socket) in sockets.enumerated() {
                let response = socket.receiveResponse(deadline: Date().addingTimeInterval(10))
                if response?.status != 200 || response?.text != #"{"tag":"r\#(round)c\#(index)"}"# {
                    wrong.append("r\(round)c\(index): \(response?.status ?? 0) \(response?.text ?? "")")
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    @Test func atTheConnectionLimitANewClientWaitsUntilAnotherCloses() throws {
        let recorder = WorkerRecorder()
        let server = try Self.startServer(recorder, threads: 2, connections: 4)
        defer { server.shutdown(grace: 1) }
        var held: [TestSocket] = []
        for index in 0..<4 {
            let socket = try TestSocket(port: server.port, timeout: 5)
            try socket.send(Self.get("/held\(index)"))
            #expect(socket.receiveResponse(deadline: Date().addingTimeInterval(10))?.status == 200)
            held.append(socket)
        }
        // The fifth connects (the kernel's backlog takes it) but is not served while four are open.
        let fifth = try TestSocket(port: server.port, timeout: 5)
        try fifth.send(Self.get("/fifth"))
        #expect(fifth.receiveResponse(deadline: Date().addingTimeInterval(0.5)) == nil)
        #expect(!fifth.isClosedByPeer(), "over the limit, the client should wait, not be dropped")
        held.removeFirst()  // closes one
        #expect(fifth.receiveResponse(deadline: Date().addingTimeInterval(10))?.status == 200)
        #expect(recorder.workerByPath["/fifth"] != nil)
    }
}
