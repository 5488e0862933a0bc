import CSQLite
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeStorage

/// What a failed write tells the caller: a full disk may pass, a broken rule will not.
@Suite struct StorageErrorTests {
    @Test func aFullDatabaseIsTemporaryAndKeepsWhatWasThere() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path("full.sqlite"))
        try connection.execute(SQLText("CREATE TABLE t (x BLOB NOT NULL)"))
        try connection.withStatement("INSERT INTO t (x) VALUES (?)") { insert throws(StorageError) in
            insert.bind(1, bytes: [1, 2, 3])
            _ = try insert.step()
        }
        // SQLite's own size cap stands in for a full disk: the same SQLITE_FULL.
        try connection.execute(SQLText("PRAGMA max_page_count = 4"))
        var error: StorageError?
        do {
            try connection.withStatement("INSERT INTO t (x) VALUES (?)") { insert throws(StorageError) in
                insert.bind(1, bytes: [UInt8](repeating: 7, count: 64 * 1024))
                _ = try insert.step()
            }
        } catch let caught {
            error = caught
        }
        #expect(error?.code == .temporary)
        #expect(error?.message.contains("SQLite 13") == true)
        let rows = try connection.withStatement("SELECT count(*) FROM t") { query throws(StorageError) in
            _ = try query.step()
            return query.int(0)
        }
        #expect(rows == 1)
    }

    @Test(arguments: [
        (SQLITE_FULL, StorageError.Code.temporary), (SQLITE_IOERR | (3 << 8), .temporary), (SQLITE_NOMEM, .temporary),
        (SQLITE_BUSY, .temporary), (SQLITE_CONSTRAINT | (8 << 8), .conflict), (SQLITE_CORRUPT, .failed),
        (SQLITE_MISMATCH, .failed),
    ])
    func resultCodesMapToWhatTheCallerCanDo(result: Int32, code: StorageError.Code) {
        #expect(SQLiteConnection.errorCode(result) == code)
    }
}
