import CupcakeCheckout
import CupcakeTestSupport
import Foundation
import Testing

/// The receipts file: appended one record at a time, so racing orders keep every receipt and a
/// crash mid-write costs only the record it tore.
@Suite struct ReceiptsTests {
    static let endpoint = URL(string: "http://127.0.0.1:8080/api/cupcakes") ?? URL(fileURLWithPath: "/")

    static func receipt(_ id: String, token: String = "rct_token") -> Receipts.Receipt {
        Receipts.Receipt(id: id, token: token, endpoint: endpoint.absoluteString, createdAt: "2026-12-03T10:00:00.000Z")
    }

    @Test func ordersPlacedAtOnceKeepEveryReceipt() throws {
        let directory = try TemporaryDirectory()
        let receipts = Receipts(directory: directory.path("data"))
        let failures = Parallel.run(8) { thread in
            (0..<25).filter { index in
                (try? receipts.add(Self.receipt("\(thread)-\(index)"))) == nil
            }.count
        }
        #expect(failures.map { $0 ?? -1 } == Array(repeating: 0, count: 8))
        let kept = try receipts.receipts(at: Self.endpoint)
        #expect(kept.count == 200)
        #expect(Set(kept.map(\.id)).count == 200)
        let mode = try FileManager.default.attributesOfItem(atPath: receipts.file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aRecordTornByACrashIsSkippedAndTheNextOneKept() throws {
        let directory = try TemporaryDirectory()
        let receipts = Receipts(directory: directory.path("data"))
        try receipts.add(Self.receipt("1"))
        // A crash in the middle of the second record's write.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: receipts.file))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("\n" + #"{"id":"2","tok"#).utf8))
        try handle.close()
        try receipts.add(Self.receipt("3"))
        #expect(try receipts.receipts(at: Self.endpoint).map(\.id) == ["1", "3"])
    }

    @Test func receiptsFromTheEarlierFileAreStillReadAndALaterOneWins() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.path("data")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let legacy = [Self.receipt("7", token: "old"), Self.receipt("8", token: "kept")]
        try JSONEncoder().encode(legacy).write(to: URL(fileURLWithPath: folder + "/receipts.json"))
        let receipts = Receipts(directory: folder)
        try receipts.add(Self.receipt("7", token: "new"))
        #expect(receipts.token(for: "7", at: Self.endpoint) == "new")
        #expect(receipts.token(for: "8", at: Self.endpoint) == "kept")
        #expect(try receipts.receipts(at: Self.endpoint).map(\.id) == ["7", "8"])
    }
}
