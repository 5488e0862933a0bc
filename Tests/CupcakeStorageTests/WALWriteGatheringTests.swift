import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeStorage

/// The store's VFS gathers a transaction's WAL writes into one. These tests look at the files
/// themselves: what is on disk the moment `insert` returns is what a kill -9 would leave.
@Suite struct WALWriteGatheringTests {
    static func order(_ number: Int) -> Order {
        Order(
            type: number % 4, quantity: 3 + number % 18, name: "Customer \(number)", streetAddress: "\(number) Main St",
            city: "Nashville", zip: "37201")
    }

    static func newOrders(_ range: Range<Int>) -> [NewOrder] {
        range.map { NewOrder(order: order($0), costCents: order($0).costCents, createdAtMilliseconds: Int64($0)) }
    }

    /// Copies the database and its WAL as they are on disk now, with the store still open, and
    /// opens the copy: SQLite recovers it from the WAL as it would after a kill -9.
    static func reopenCopy(of path: String, in directory: TemporaryDirectory) throws -> SQLiteOrderStore {
        let copy = directory.path("copy-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        return try SQLiteOrderStore(path: copy)
    }

    @Test(arguments: Durability.allCases)
    func everyCommitIsInTheFilesWhenInsertReturns(durability: Durability) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let store = try SQLiteOrderStore(path: path, durability: durability)
        defer { store.close() }
        var placed: [StoredOrder] = []
        for commit in 0..<30 {
            placed += try store.insert(Self.newOrders(commit * 3..<commit * 3 + 1 + commit % 3))
            // Read through another connection, with its own file handle on the WAL.
            let last = try #require(placed.last)
            #expect(try store.order(id: last.id) == last)
        }
        let copy = try Self.reopenCopy(of: path, in: directory)
        defer { copy.close() }
        #expect(try copy.orderCount() == placed.count)
        for order in placed {
            #expect(try copy.order(id: order.id) == order)
        }
    }

    @Test(arguments: Durability.allCases)
    func aTransactionLargerThanTheBufferIsWrittenWhole(durability: Durability) throws {
        // About 30,000 orders with four b-trees spill pages before the commit, rewrite spilled
        // frames and fill the 96 KiB buffer many times over.
        let directory = try TemporaryDirectory()
        let path = directory.path("orders.sqlite")
        let store = try SQLiteOrderStore(path: path, durability: durability, walRestartFrames: 1_000_000)
        defer { store.close() }
        let placed = try store.insert(Self.newOrders(0..<30_000))
        let more = try store.insert(Self.newOrders(30_000..<30_005))
        let copy = try Self.reopenCopy(of: path, in: directory)
        defer { copy.close() }
        #expect(try copy.orderCount() == 30_005)
        for order in placed.prefix(50) + placed.suffix(50) + more {
            #expect(try copy.order(id: order.id) == order)
        }
        let page = try copy.list(OrderQuery(namePrefix: "customer 2999", limit: 100))
        #expect(page.total == 11)  // 2999 and 29990...29999
    }

    @Test func theCommitFrameWritesTheTransactionOutItself() throws {
        // Plain statements, without the store's check after COMMIT: the commit frame's own
        // write must leave nothing gathered.
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path("plain.sqlite"))
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("CREATE TABLE t (x BLOB NOT NULL)")
        // One small row, one of two pages, and one of about fifty (past the buffer's limit).
        for size in [10, 5_000, 200_000] {
            try connection.execute("BEGIN IMMEDIATE")
            try connection.withStatement("INSERT INTO t (x) VALUES (?)") { insert throws(StorageError) in
                insert.bind(1, bytes: [UInt8](repeating: 7, count: size))
                try insert.step()
            }
            try connection.execute("COMMIT")
            #expect(connection.pendingWALBytes == 0)
        }
        connection.close()
    }

    @Test func theStoreOpensItsFilesThroughTheGatheringVFS() throws {
        #expect(WALWriteGathering.vfsName == "cupcake-excl")
    }
}
