import CSQLite
import Foundation

/// SQLite's "transient" destructor: SQLite copies the bytes before the call returns.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection. Not thread-safe: its owner serializes every use. `init` opens it,
/// `close()` (or `deinit`) finalizes its statements and closes it.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    /// The same statements for literal SQL, found by the literal's address: no text is copied
    /// or hashed on the hot path.
    private var literalStatements: [UnsafeRawPointer: SQLiteStatement] = [:]
    /// Multi-row forms of literal INSERTs, by the literal's address and the row count.
    private var multiRowStatements: [MultiRowKey: SQLiteStatement] = [:]
    private struct MultiRowKey: Hashable {
        var literal: UnsafeRawPointer
        var rows: Int
    }
    let path: String

    init(path: String) throws(StorageError) {
        self.path = path
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        var db: OpaquePointer?
        // "unix-excl" (see SQLiteLibrary): the process holds the database file exclusively and
        // keeps the WAL index in its own memory; connections inside this process share it,
        // readers beside the writer as before. Never read-only: a read-only connection on
        // "unix-excl" takes and releases real fcntl locks, and releasing one would release the
        // process's exclusive lock on the same bytes.
        let code = sqlite3_open_v2(path, &db, flags, SQLiteLibrary.vfsName)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw StorageError(.unavailable, "cannot open database \(path): \(message)")
        }
        handle = db
        sqlite3_busy_timeout(db, 5_000)
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Makes ``close()`` leave the WAL as it is: no checkpoint, no delete, as if the process
    /// had been killed. For a database whose fsync failed (see `Checkpointer`).
    func keepWALOnClose() {
        if let handle { _ = cupcake_sqlite_no_checkpoint_on_close(handle) }
    }

    func close() {
        statements.values.forEach { $0.finalize() }
        statements.removeAll()
        literalStatements.removeAll()
        multiRowStatements.removeAll()
        if let handle {
            sqlite3_close_v2(handle)
        }
        handle = nil
    }

    /// Runs SQL with no parameters (schema, pragmas, transactions). Only constant text is passed
    /// here; values always go through ``withStatement(_:_:)`` and bindings.
    func execute(_ sql: StaticString) throws(StorageError) {
        try execute(SQLText(sql))
    }

    /// What a failed SQLite result means for the caller: a full or failing disk, no memory or a
    /// busy database may pass (the transaction was rolled back); anything else is a failure.
    static func errorCode(_ result: Int32) -> StorageError.Code {
        switch result & 0xff {
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM, SQLITE_BUSY, SQLITE_LOCKED: .temporary
        case SQLITE_CONSTRAINT: .conflict
        default: .failed
        }
    }

    /// The error for a failed SQLite result, carrying the result code.
    static func failure(_ result: Int32, _ message: String) -> StorageError {
        var error = StorageError(errorCode(result), "\(message) (SQLite \(result))")
        error.sqliteResult = result
        return error
    }

    /// Runs composed constant SQL with no parameters.
    func execute(_ sql: SQLText) throws(StorageError) {
        guard let handle else { throw StorageError(.unavailable, "database is closed") }
        var error: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql.text, nil, nil, &error)
        if code != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            if code & 0xff == SQLITE_BUSY {
                throw StorageError(.unavailable, "\(path) is in use by another process (SQLite \(code))")
            }
            throw Self.failure(code, message)
        }
    }

    /// Runs `body` with the cached prepared statement for constant SQL, then resets it, so no
    /// statement is left holding a read snapshot (which would stop WAL checkpoints).
    func withStatement<T>(_ sql: StaticString, _ body: (SQLiteStatement) throws(StorageError) -> T) throws(StorageError)
        -> T
    {
        guard sql.hasPointerRepresentation else { return try withStatement(SQLText(sql), body) }
        let address = UnsafeRawPointer(sql.utf8Start)
        let statement: SQLiteStatement
        if let cached = literalStatements[address] {
            statement = cached
        } else {
            statement = try prepared(SQLText(sql))
            literalStatements[address] = statement
        }
        defer { statement.reset() }
        return try body(statement)
    }

    /// Runs `body` with a literal one-row `INSERT … VALUES (?, …)` extended to `rows` rows (see
    /// ``SQLText/repeatingValues(rows:)``); row `r` (from 0) binds its `n`th value at
    /// `r * columns + n`. One statement inserts them all, its cursors staying open from row to
    /// row instead of each insert seeking every index from its root.
    func withStatement<T>(
        _ sql: StaticString, rows: Int, _ body: (SQLiteStatement) throws(StorageError) -> T
    ) throws(StorageError) -> T {
        guard rows > 1, sql.hasPointerRepresentation else { return try withStatement(sql, body) }
        let key = MultiRowKey(literal: UnsafeRawPointer(sql.utf8Start), rows: rows)
        let statement: SQLiteStatement
        if let cached = multiRowStatements[key] {
            statement = cached
        } else {
            statement = try prepared(SQLText(sql).repeatingValues(rows: rows))
            multiRowStatements[key] = statement
        }
        defer { statement.reset() }
        return try body(statement)
    }

    /// The same for SQL composed from constant fragments.
    func withStatement<T>(_ sql: SQLText, _ body: (SQLiteStatement) throws(StorageError) -> T) throws(StorageError) -> T
    {
        let statement = try prepared(sql)
        defer { statement.reset() }
        return try body(statement)
    }

    /// A cached prepared statement, reset and with its bindings cleared.
    private func prepared(_ sql: SQLText) throws(StorageError) -> SQLiteStatement {
        if let statement = statements[sql.text] {
            statement.reset()
            return statement
        }
        guard let handle else { throw StorageError(.unavailable, "database is closed") }
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql.text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard code == SQLITE_OK, let raw else {
            throw StorageError(.failed, "prepare failed: \(String(cString: sqlite3_errmsg(handle)))")
        }
        let statement = SQLiteStatement(raw, connection: self)
        statements[sql.text] = statement
        return statement
    }

    /// The first column of the first row of a constant query, e.g. `PRAGMA user_version`.
    func integerPragma(_ sql: StaticString) throws(StorageError) -> Int {
        try withStatement(sql) { statement throws(StorageError) in
            try statement.step() ? statement.int(0) : 0
        }
    }

    /// What a PASSIVE checkpoint did: SQLite's result code, the WAL's frame count and how many
    /// frames are now copied into the database file.
    struct CheckpointResult {
        var code: Int32
        var logFrames: Int
        var copiedFrames: Int
    }

    /// Runs a PASSIVE checkpoint.
    func checkpointPassive() -> CheckpointResult {
        guard let handle else { return CheckpointResult(code: SQLITE_MISUSE, logFrames: 0, copiedFrames: 0) }
        var log: Int32 = 0
        var copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        return CheckpointResult(code: code, logFrames: Int(log), copiedFrames: Int(copied))
    }

    /// Writes the database file's dirty pages out and waits for them, through this
    /// connection's own SQLite file handle (`SQLITE_FCNTL_FILE_POINTER`, then the VFS's `xSync`):
    /// no descriptor is opened or closed. Returns SQLite's result code.
    ///
    /// The caller must treat a failure as final for the database: the kernel reports a
    /// write-back error once per open file, so after this call has seen it, SQLite's own next
    /// fsync on the same descriptor would succeed and SQLite would count pages as written that
    /// never reached the disk (see `Checkpointer`).
    func syncDatabaseFile() -> Int32 {
        sync(SQLITE_FCNTL_FILE_POINTER)
    }

    /// The same for this connection's WAL file; `SQLITE_OK` while the connection has no WAL
    /// open yet (it opens it at its first read).
    func syncWALFile() -> Int32 {
        sync(SQLITE_FCNTL_JOURNAL_POINTER)
    }

    private func sync(_ pointer: Int32) -> Int32 {
        guard let handle else { return SQLITE_MISUSE }
        var file: UnsafeMutablePointer<sqlite3_file>?
        let code = sqlite3_file_control(handle, "main", pointer, &file)
        if code == SQLITE_OK, pointer == SQLITE_FCNTL_JOURNAL_POINTER, file?.pointee.pMethods == nil {
            return SQLITE_OK
        }
        guard code == SQLITE_OK, let file, let sync = file.pointee.pMethods?.pointee.xSync else {
            return code == SQLITE_OK ? SQLITE_MISUSE : code
        }
        return sync(file, SQLITE_SYNC_NORMAL)
    }

    var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    var errorMessage: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "database is closed" }

    /// Runs `body` inside BEGIN IMMEDIATE … COMMIT, rolling back if it throws.
    func transaction<T>(_ body: () throws(StorageError) -> T) throws(StorageError) -> T {
        // Prepared once, not parsed again for every commit.
        _ = try withStatement("BEGIN IMMEDIATE") { begin throws(StorageError) in try begin.step() }
        let result: T
        do {
            result = try body()
            _ = try withStatement("COMMIT") { commit throws(StorageError) in try commit.step() }
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        return result
    }
}

/// A prepared statement owned by its connection.
final class SQLiteStatement {
    private var raw: OpaquePointer?
    private unowned let connection: SQLiteConnection

    init(_ raw: OpaquePointer, connection: SQLiteConnection) {
        self.raw = raw
        self.connection = connection
    }

    func finalize() {
        sqlite3_finalize(raw)
        raw = nil
    }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(raw, index, Int64(value))
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(raw, index, value)
    }

    func bind(_ index: Int32, _ value: Bool) {
        sqlite3_bind_int(raw, index, value ? 1 : 0)
    }

    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { buffer in
            _ = buffer.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(raw, index, $0.baseAddress, Int32($0.count), sqliteTransient)
            }
        }
    }

    /// Binds bytes as TEXT (not validated as UTF-8: used for range bounds).
    func bind(_ index: Int32, text bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            _ = buffer.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(raw, index, $0.baseAddress, Int32($0.count), sqliteTransient)
            }
        }
    }

    func bind(_ index: Int32, bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            _ = sqlite3_bind_blob(raw, index, buffer.baseAddress, Int32(buffer.count), sqliteTransient)
        }
    }

    /// The index of a named parameter such as `:limit`; 0 when the statement has none.
    func parameter(_ name: String) -> Int32 {
        sqlite3_bind_parameter_index(raw, name)
    }

    /// Steps once; `true` when a row is ready, `false` when done.
    @discardableResult
    func step() throws(StorageError) -> Bool {
        let code = sqlite3_step(raw)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = connection.errorMessage
            sqlite3_reset(raw)
            if code & 0xff == SQLITE_CONSTRAINT {
                throw StorageError(.conflict, message)
            }
            throw SQLiteConnection.failure(code, message)
        }
    }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(raw, column)) }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }
    func bool(_ column: Int32) -> Bool { sqlite3_column_int64(raw, column) != 0 }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as text, nil when it is NULL.
    func optionalString(_ column: Int32) -> String? {
        sqlite3_column_type(raw, column) == SQLITE_NULL ? nil : string(column)
    }

    func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let blob = sqlite3_column_blob(raw, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}
