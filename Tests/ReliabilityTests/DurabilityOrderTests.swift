import CupcakeTestSupport
import Foundation
import Testing

/// What "a 201 means the order is on disk" needs, seen in the server's own system calls: for
/// every order answered 201, the WAL frames holding it are written, then the WAL is flushed
/// (fdatasync, or fsync), and only then does the answer leave. strace records the calls of every
/// thread in the order they happen; a few hundred orders are posted at once so that group commit
/// answers many orders with one flush.
@Suite struct DurabilityOrderTests {
    /// One order's trail in the trace: where its frames were first written to the WAL, where
    /// the WAL was next flushed after that, and where its 201 started to leave.
    struct Trail {
        var written: Int?
        var flushed: Int?
        var answered: Int?
    }

    /// Posts `count` orders from 16 clients to a server run under strace; returns the trails of
    /// the orders answered 201 and how many were.
    static func trace(durability: String, count: Int) throws -> (
        trails: [String: Trail], acknowledged: Int, summary: String
    ) {
        let directory = try TemporaryDirectory()
        let trace = directory.path("strace.out")
        let strace = try #require(
            ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "strace is not installed (scripts/test installs it)")
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"),
            arguments: ["--quiet", "--durability", durability, "--no-pin-threads"],
            wrapper: [
                // Only the calls traced stop the server (seccomp-bpf); 4,200 bytes of each
                // written buffer hold a WAL page (4,096) and a 201 with its order.
                strace, "-f", "-qq", "--seccomp-bpf", "-y", "-s", "4200", "-o", trace,
                "-e", "trace=pwrite64,pwritev,write,writev,fdatasync,fsync,sendmsg,sendto",
            ])
        let names = (0..<count).map { String(format: "durable-order-%05d", $0) }
        let statuses = Parallel.run(16, timeout: 120) { client -> [Int] in
            stride(from: client, to: count, by: 16).map { index in
                let body = HostileCorpus.valid.replacingOccurrences(of: "Taylor", with: names[index])
                return (try? RawHTTP.postOrder(port: server.port, json: body).status) ?? 0
            }
        }.compactMap { $0 }.flatMap { $0 }
        #expect(server.stop() == 0)
        let acknowledged = statuses.count { $0 == 201 }
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        return (trails(lines, names: Set(names)), acknowledged, summary(lines))
    }

    /// What the trace holds, for a failure's message: its length, the calls by name, and the
    /// first lines that carry a 201.
    static func summary(_ lines: [Substring]) -> String {
        var calls: [Substring: Int] = [:]
        for line in lines {
            guard let space = line.firstIndex(of: " ") else { continue }
            let call = line[space...].drop { $0 == " " }
            calls[call.prefix { $0 != "(" && $0 != " " }, default: 0] += 1
        }
        let answers = lines.filter { $0.contains("201 Created") }.prefix(2).map { String($0.prefix(600)) }
        return "\(lines.count) lines; calls: \(calls.sorted { $0.value > $1.value }.prefix(12)); 201s: \(answers)"
    }

    /// Reads the trace: a call that another thread's calls interrupted is split into
    /// `... <unfinished ...>` and `<... name resumed> ...`; a write or flush counts where it
    /// finished, an answer where it started.
    static func trails(_ lines: [Substring], names: Set<String>) -> [String: Trail] {
        var trails: [String: Trail] = [:]
        var pendingWrites: [Substring: [String]] = [:]  // by thread: the names an unfinished WAL write holds
        var unflushed: [String] = []  // written to the WAL, not yet flushed
        var pendingFlushes: Set<Substring> = []  // threads with an unfinished WAL flush
        // A flush that finished: every WAL write that finished before it is on disk.
        func flush(at index: Int) {
            for name in unflushed where trails[name]?.flushed == nil { trails[name]?.flushed = index }
            unflushed.removeAll()
        }
        func namesIn(_ line: Substring) -> [String] {
            var found: [String] = []
            var rest = line[...]
            while let range = rest.range(of: "durable-order-") {
                let name = String(rest[range.lowerBound...].prefix(19))
                if names.contains(name) { found.append(name) }
                rest = rest[range.upperBound...]
            }
            return found
        }
        for (index, line) in lines.enumerated() {
            guard let space = line.firstIndex(of: " ") else { continue }
            let thread = line[..<space]
            // strace pads the thread id to five columns ("%-5u "): a 4-digit id is followed by
            // two spaces, a 6-digit one by one.
            let call = line[space...].drop { $0 == " " }
            let isWAL = call.contains("-wal>")
            if call.hasPrefix("pwrite64(") || call.hasPrefix("pwritev(") || call.hasPrefix("write(") {
                guard isWAL else { continue }
                let held = namesIn(call)
                if call.hasSuffix("<unfinished ...>") {
                    pendingWrites[thread] = held
                } else {
                    for name in held where trails[name]?.written == nil {
                        trails[name, default: Trail()].written = index
                    }
                    unflushed += held
                }
            } else if call.hasPrefix("<... pwrite64 resumed>") || call.hasPrefix("<... pwritev resumed>")
                || call.hasPrefix("<... write resumed>")
            {
                let held = pendingWrites.removeValue(forKey: thread) ?? []
                for name in held where trails[name]?.written == nil { trails[name, default: Trail()].written = index }
                unflushed += held
            } else if call.hasPrefix("fdatasync(") || call.hasPrefix("fsync(") {
                guard isWAL else { continue }
                if call.hasSuffix("<unfinished ...>") {
                    pendingFlushes.insert(thread)
                } else if call.hasSuffix("= 0") {
                    flush(at: index)
                }
            } else if call.hasPrefix("<... fdatasync resumed>") || call.hasPrefix("<... fsync resumed>") {
                // A resumed line does not name the file: its unfinished start did.
                if pendingFlushes.remove(thread) != nil, call.hasSuffix("= 0") { flush(at: index) }
            } else if call.hasPrefix("sendmsg(") || call.hasPrefix("sendto(") || call.hasPrefix("writev(") {
                guard call.contains("HTTP/1.1 201 Created") else { continue }
                for name in namesIn(call) where trails[name]?.answered == nil {
                    trails[name, default: Trail()].answered = index
                }
            }
        }
        return trails
    }

    @Test func everyAnswered201LeavesAfterTheFlushOfItsWALFrames() throws {
        let (trails, acknowledged, summary) = try Self.trace(durability: "full", count: 200)
        #expect(acknowledged == 200)
        let answered = trails.filter { $0.value.answered != nil }
        #expect(answered.count == acknowledged, "every 201 is in the trace: \(summary)")
        let early = answered.compactMap { name, trail -> String? in
            if let written = trail.written, let flushed = trail.flushed, let sent = trail.answered, written < flushed,
                flushed < sent
            {
                return nil
            }
            return
                "\(name): written \(trail.written ?? -1), flushed \(trail.flushed ?? -1), 201 \(trail.answered ?? -1)"
        }
        #expect(early.isEmpty, "answered before their WAL frames were flushed: \(early.prefix(5))")
        print(
            "RELIABILITY durability full: \(answered.count) orders posted by 16 clients, each 201 sent after an fdatasync "
                + "of the WAL that followed the write of its frames (strace -f)")
    }

    /// The check can fail: with `--durability process` commits are not flushed before their
    /// answer, and the trace shows 201s leaving first.
    @Test func withProcessDurabilityTheTraceShowsAnswersBeforeTheFlush() throws {
        let (trails, acknowledged, summary) = try Self.trace(durability: "process", count: 60)
        #expect(acknowledged == 60)
        let early = trails.values.count { trail in
            guard let sent = trail.answered else { return false }
            return trail.flushed.map { $0 > sent } ?? true
        }
        #expect(early > 0, "\(summary)")
    }
}

extension DurabilityOrderTests {
    /// strace pads a thread id to five columns, so the gap before the call depends on the id's
    /// length; a trace from a machine with short ids reads the same as one with long ids.
    @Test(arguments: [" ", "  "])
    func theTraceIsReadWhateverTheThreadIdLength(gap: String) {
        let name = "durable-order-00007"
        let id = gap.count == 1 ? "123456" : "4979"
        let lines: [Substring] = [
            "\(id)\(gap)pwrite64(5</tmp/x/orders.sqlite-wal>, \"..\(name)..\", 4120, 32) = 4120",
            "\(id)\(gap)fdatasync(5</tmp/x/orders.sqlite-wal> <unfinished ...>",
            "\(id)\(gap)<... fdatasync resumed>) = 0",
            "\(id)\(gap)sendmsg(9<socket:[1]>, {msg_iov=[{iov_base=\"HTTP/1.1 201 Created\\r\\n..\(name)\"}]}) = 600",
        ].map { Substring($0) }
        let trail = Self.trails(lines, names: [name])[name]
        #expect(trail?.written == 0)
        #expect(trail?.flushed == 2)
        #expect(trail?.answered == 3)
    }
}
