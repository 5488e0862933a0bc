import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeServer

/// Pinning the HTTP workers and the commit thread: when it happens, and what a real
/// `cupcake serve` ends up with (read back from the kernel).
@Suite struct ThreadPlacementTests {
    /// The CPUs this test process may use; the child server inherits them.
    static let allowed = ThreadPlacement.allowedCPUs()
    static let twoOrMoreCPUs = allowed.count >= 2

    @Test(
        "Only one worker per allowed CPU, on two CPUs or more, is pinned",
        arguments: [
            (2, [0, 1], [0, 1]),
            (4, [0, 1, 2, 3], [0, 1, 2, 3]),
            (2, [2, 5], [2, 5]),  // a cpuset that does not start at 0
            (3, [0, 1], nil),  // more workers than CPUs
            (1, [0, 1], nil),
            (1, [0], nil),  // one CPU: nothing to place
            (0, [], nil),
        ] as [(Int, [Int32], [Int32]?)])
    func placement(workers: Int, allowed: [Int32], expected: [Int32]?) {
        let placement = ThreadPlacement(workers: workers, allowed: allowed)
        #expect(placement?.workerCPUs == expected)
        #expect(placement?.commitCPU == expected?.first)
    }

    @Test func allowedCPUsAgreeWithProcStatus() throws {
        // The kernel's own listing of the same mask, e.g. "0-1" or "0,2-3".
        let status = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        let listed = line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        var expected: [Int32] = []
        for part in listed.split(separator: ",") {
            let bounds = part.split(separator: "-").compactMap { Int32($0) }
            let low = try #require(bounds.first)
            expected += Array(low...(bounds.last ?? low))
        }
        #expect(!expected.isEmpty)
        #expect(ThreadPlacement.allowedCPUs() == expected)
    }

    /// Each thread of a running server, by name, with the CPUs it may run on, once `ready` holds
    /// (at most 10 s): each thread names and places itself as it starts, which on a busy
    /// machine can come after the startup line.
    static func threads(
        of processID: Int32, until ready: ([(name: String, cpus: [Int32])]) -> Bool
    ) throws -> [(name: String, cpus: [Int32])] {
        let deadline = Date().addingTimeInterval(10)
        var found = try threads(of: processID)
        while !ready(found) && Date() < deadline {
            usleep(20_000)
            found = try threads(of: processID)
        }
        return found
    }

    /// Each thread of a running server, by name, with the CPUs it may run on.
    static func threads(of processID: Int32) throws -> [(name: String, cpus: [Int32])] {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(processID)/task")
        return try tasks.compactMap { task in
            guard let id = pid_t(task) else { return nil }
            let name = try String(contentsOfFile: "/proc/\(processID)/task/\(task)/comm", encoding: .utf8)
            return (name.trimmingCharacters(in: .whitespacesAndNewlines), ThreadPlacement.cpus(ofThread: id))
        }
    }

    @Test(.enabled(if: twoOrMoreCPUs, "needs two CPUs or more"))
    func aServerPinsEachWorkerToACPUAndTheCommitThreadBesideTheFirst() throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(
            databasePath: directory.path("orders.sqlite"), arguments: ["--threads", "\(Self.allowed.count)"])
        defer { server.stop() }
        #expect(server.log.contains("\(Self.allowed.count) workers pinned)"))
        let threads = try Self.threads(of: try #require(server.processID)) { threads in
            threads.filter { $0.name == "MHD-worker" && $0.cpus.count == 1 }.count == Self.allowed.count
                && threads.contains { $0.name == "cupcake-commit" && $0.cpus.count == 1 }
                && threads.contains { $0.name == "cupcake-checkpt" }
        }

        let workers = threads.filter { $0.name == "MHD-worker" }
        #expect(workers.count == Self.allowed.count)
        #expect(workers.allSatisfy { $0.cpus.count == 1 })
        #expect(Set(workers.flatMap(\.cpus)) == Set(Self.allowed))
        let commit = try #require(threads.first { $0.name == "cupcake-commit" })
        #expect(commit.cpus == [Self.allowed[0]])
        // Everything else stays free to run anywhere.
        let checkpoint = try #require(threads.first { $0.name == "cupcake-checkpt" })
        #expect(checkpoint.cpus == Self.allowed)

        // And it serves as before.
        let created = try RawHTTP.postOrder(port: server.port, json: ServeProcessTests.order)
        #expect(created.status == 201)
    }

    @Test(
        .enabled(if: twoOrMoreCPUs, "needs two CPUs or more"),
        arguments: [["--no-pin-threads"], ["--threads", "\(allowed.count + 1)"]])
    func aServerLeavesItsThreadsFree(arguments: [String]) throws {
        let directory = try TemporaryDirectory()
        let server = try ServerProcess(databasePath: directory.path("orders.sqlite"), arguments: arguments)
        defer { server.stop() }
        #expect(!server.log.contains("pinned"))
        let threads = try Self.threads(of: try #require(server.processID)) { threads in
            threads.filter { $0.name == "MHD-worker" || $0.name == "cupcake-commit" }.count >= 3
        }
        let busy = threads.filter { $0.name == "MHD-worker" || $0.name == "cupcake-commit" }
        #expect(busy.count >= 3)
        #expect(busy.allSatisfy { $0.cpus == Self.allowed })
    }
}
