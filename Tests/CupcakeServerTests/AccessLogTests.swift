import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeServer

/// The access log: its line format, escaping, request ids, buffering and what it drops.
@Suite struct AccessLogTests {
    @Test(arguments: [
        ("/api/cupcakes", "/api/cupcakes"),
        ("/api/x\nforged 200", #"/api/x\x0aforged\x20200"#),
        ("/a\r\tb\\c\u{7F}", #"/a\x0d\x09b\x5cc\x7f"#),
        ("/café", "/café"),
        // C1 controls, line separators and bidi formatting, which a terminal or a log viewer
        // would act on, as in the CLI (TextSafety).
        ("/a\u{9B}31m\u{85}", #"/a\x9b31m\x85"#),
        ("/x\u{2028}y\u{2029}\u{202E}z", #"/x\u{2028}y\u{2029}\u{202e}z"#),
    ])
    func aRequestLineHasEveryFieldAndNoByteThatCouldSplitIt(path: String, logged: String) throws {
        let captured = TextCollector()
        let log = AccessLog(enabled: true, write: captured.add)
        log.request(
            method: "GET", path: path, status: 404, nanoseconds: 1_234_567, requestID: "abc-1", aborted: false)
        log.flush()
        let lines = captured.text.split(separator: "\n", omittingEmptySubsequences: false)
        try #require(lines.count == 2)
        #expect(lines[1].isEmpty)
        let fields = lines[0].split(separator: " ")
        try #require(fields.count == 6)
        let stamp = try #require(Timestamp.milliseconds(iso8601: String(fields[0])))
        #expect(abs(stamp - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000)
        #expect(fields[1] == "GET")
        #expect(fields[2] == logged)
        #expect(fields[3] == "404")
        #expect(fields[4] == "1.234ms")
        #expect(fields[5] == "request_id=abc-1")
    }

    @Test(arguments: [
        (0 as UInt64, 0, false, "0.000ms", "0"),
        (999, 201, false, "0.000ms", "201"),
        (1_000, 201, false, "0.001ms", "201"),
        (12_345_678_901, 500, false, "12345.678ms", "500"),
        (5_000_000, 0, true, "5.000ms", "aborted"),
        // An answer that did not reach its client: an order stored and never acknowledged.
        (5_000_000, 201, true, "5.000ms", "aborted(201)"),
    ])
    func durationsAndStatuses(nanoseconds: UInt64, status: Int, aborted: Bool, duration: String, shown: String) {
        let captured = TextCollector()
        let log = AccessLog(enabled: true, write: captured.add)
        log.request(
            method: "POST", path: "/", status: status, nanoseconds: nanoseconds, requestID: "r", aborted: aborted)
        log.flush()
        #expect(captured.text.hasSuffix(" POST / \(shown) \(duration) request_id=r\n"))
    }

    @Test func whatTheLimitsTurnedAwayIsCountedInOneLine() {
        let captured = TextCollector()
        let log = AccessLog(enabled: true, write: captured.add)
        log.summarizeLimits()  // nothing turned away: no line
        for _ in 0..<3 { log.limited(.posts) }
        log.limited(.connections)
        log.summarizeLimits()
        #expect(
            captured.waitFor(
                containing:
                    "limits: 1 connections closed at the per-address limit; 3 POSTs answered 429 (rate per address)\n"))
        log.summarizeLimits()  // counted once
        log.flush()
        #expect(captured.text.components(separatedBy: "limits:").count == 2)
    }

    @Test func requestIDsAreUniqueWithOneProcessPrefix() {
        let log = AccessLog(enabled: false, write: { _ in })
        let ids = (0..<1000).map { _ in log.nextRequestID() }
        #expect(Set(ids).count == 1000)
        let pattern = /[0-9a-f]{8}-[0-9a-f]{8}/
        #expect(ids.allSatisfy { $0.wholeMatch(of: pattern) != nil })
        #expect(Set(ids.map { $0.prefix(9) }).count == 1)
        #expect(ids[0].hasSuffix("-00000001"))
        #expect(ids[999].hasSuffix("-000003e8"))
        #expect(AccessLog(enabled: false, write: { _ in }).nextRequestID().prefix(9) != ids[0].prefix(9))
    }

    @Test func linesReachTheSinkWithoutAFlushInOneChunk() throws {
        let captured = TextCollector()
        let log = AccessLog(enabled: true, write: captured.add)
        for number in 0..<100 {
            log.request(
                method: "GET", path: "/\(number)", status: 200, nanoseconds: 0, requestID: "r", aborted: false)
        }
        // The writer thread writes within 50 ms; allow a loaded machine far longer.
        let deadline = Date().addingTimeInterval(10)
        while captured.text.split(separator: "\n").count < 100, Date() < deadline { usleep(5_000) }
        let lines = captured.text.split(separator: "\n")
        #expect(lines.count == 100)
        #expect(lines.enumerated().allSatisfy { $0.element.contains(" GET /\($0.offset) 200 ") })
        #expect(captured.count < 100)
    }

    @Test func aNoticeIsWrittenWithoutAFlushAfterTheLinesBeforeIt() {
        let captured = TextCollector()
        let quiet = AccessLog(enabled: false, write: captured.add)
        quiet.request(method: "GET", path: "/", status: 200, nanoseconds: 0, requestID: "r", aborted: false)
        quiet.notice("stopped")
        #expect(captured.waitFor(suffix: "stopped\n"))
        #expect(captured.text == "stopped\n")

        let loud = TextCollector()
        let log = AccessLog(enabled: true, write: loud.add)
        log.request(method: "GET", path: "/", status: 200, nanoseconds: 0, requestID: "r", aborted: false)
        log.notice("stopped")
        #expect(loud.waitFor(suffix: " GET / 200 0.000ms request_id=r\nstopped\n"))
    }

    @Test func noCallerWaitsForAStalledStandardError() {
        let captured = TextCollector()
        let release = DispatchSemaphore(value: 0)
        let log = AccessLog(enabled: true) { chunk in
            release.wait()  // a reader that stopped reading
            captured.add(chunk)
        }
        log.notice("first")
        // The log thread is now stuck in the sink; a worker logging a request and an error must
        // still return.
        let returned = DispatchSemaphore(value: 0)
        let worker = Thread {
            log.request(method: "GET", path: "/", status: 500, nanoseconds: 0, requestID: "r", aborted: false)
            log.notice("error: request r")
            returned.signal()
        }
        worker.start()
        #expect(returned.wait(timeout: .now() + 10) == .success)
        release.signal()
        release.signal()
        #expect(captured.waitFor(suffix: " GET / 500 0.000ms request_id=r\nerror: request r\n"))
        #expect(captured.text.hasPrefix("first\n"))
    }

    @Test func linesPastTheCapacityAreDroppedAndCounted() {
        let captured = TextCollector()
        let writer = LogWriter(background: false, capacity: 64) { chunk in
            captured.add(String(decoding: chunk, as: UTF8.self))
        }
        for number in 0..<10 {
            writer.append { $0.append(contentsOf: "line \(number) of twenty\n".utf8) }
        }
        writer.flush()
        let lines = captured.text.split(separator: "\n")
        // 17 bytes a line: three make 51 bytes, the fourth starts below 64 and is kept.
        #expect(lines.prefix(4) == ["line 0 of twenty", "line 1 of twenty", "line 2 of twenty", "line 3 of twenty"])
        #expect(lines.count == 5)
        #expect(lines.last?.contains("6 access-log lines dropped") == true)

        writer.append { $0.append(contentsOf: "after\n".utf8) }
        writer.flush()
        #expect(captured.text.hasSuffix("dropped: standard error did not keep up\nafter\n"))
    }

    @Test func aWriteToAFullNonBlockingPipeWaitsForTheReader() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        let chunk = [UInt8](repeating: 65, count: 256 * 1024)  // past a pipe's 64 KiB
        let received = Received()
        let readEnd = fds[0]
        let reader = Thread {
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 65536)
            while total < chunk.count {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                total += count
            }
            received.set(total)
        }
        reader.start()
        LogWriter.fileDescriptorSink(fds[1])(chunk)
        let deadline = Date().addingTimeInterval(10)
        while received.value < chunk.count, Date() < deadline { usleep(5_000) }
        #expect(received.value == chunk.count)
    }
}

/// What the pipe reader got, across threads.
private final class Received: @unchecked Sendable {
    // Safe: `total` is only touched while holding `lock`.
    private let lock = NSLock()
    private var total = 0
    func set(_ value: Int) { lock.withLock { total = value } }
    var value: Int { lock.withLock { total } }
}
