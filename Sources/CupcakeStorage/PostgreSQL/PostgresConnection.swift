import CPostgres
import Foundation

/// One libpq connection. Not thread-safe: its owner (``PostgresPool``) lends it to one thread at
/// a time. `init` connects, `close()` (or `deinit`) finishes it.
///
/// Statements are prepared once per connection (named by a number) and run with parameters as
/// text, except byte strings, which go as binary; results are read as text. Failures carry
/// PostgreSQL's SQLSTATE, mapped to ``StorageError`` codes: a connection that is gone, a server
/// shutting down, a serialization failure or a timeout is ``StorageError/Code/temporary`` (the
/// server answers 503 and the client retries with its key).
final class PostgresConnection {
    private var handle: OpaquePointer?
    private var prepared: [String: String] = [:]
    /// Set by the notice receiver when PostgreSQL stopped waiting for the synchronous standby.
    private let notices = Notices()

    /// What the notice receiver saw, for the statement that caused it.
    private final class Notices {
        /// PostgreSQL gave up waiting for the synchronous standby (a statement timeout or a
        /// cancel during the wait, or a shutdown): the transaction committed on this server
        /// only, so it must not be reported as stored.
        var replicationWaitCanceled = false
    }

    /// Connects with a libpq connection string or URI, then sets what every session needs.
    init(conninfo: String, statementTimeoutMilliseconds: Int) throws(StorageError) {
        // connect_timeout first: values in the URI (expanded from dbname) override it.
        let keywords = ["connect_timeout", "dbname"]
        let values = ["3", conninfo]
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers + [nil], valuePointers + [nil], 1)
            }
        }
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { Self.message(PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(connection)
            throw StorageError(.temporary, "cannot connect to PostgreSQL: \(message)")
        }
        handle = connection
        // libpq prints every notice to stderr; a NOTICE such as "relation already exists,
        // skipping" (the migrations' IF NOT EXISTS) is noise for the operator, a WARNING is not.
        // A WARNING that PostgreSQL stopped waiting for the synchronous standby ("canceling wait
        // for synchronous replication ...", "The transaction has already committed locally, but
        // might not have been replicated to the standby") marks the statement's outcome as
        // unknown (see `query`). English text: the server's messages are matched as the
        // clusters cupcake starts write them (initdb --no-locale).
        PQsetNoticeReceiver(
            connection,
            { context, result in
                // PG_DIAG_SEVERITY_NONLOCALIZED (a char macro Swift does not import).
                guard let result,
                    let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))),
                    String(cString: severity) == "WARNING",
                    let message = PQresultErrorMessage(result)
                else { return }
                let text = String(cString: message)
                if let context, text.contains("synchronous replication") {
                    Unmanaged<Notices>.fromOpaque(context).takeUnretainedValue().replicationWaitCanceled = true
                }
                FileHandle.standardError.write(Data("PostgreSQL: \(text)".utf8))
            }, Unmanaged.passUnretained(notices).toOpaque())
        // Every commit durable before it is answered; no statement or idle transaction forever.
        try execute(
            SQLText(
                """
                SET synchronous_commit = on;
                SET idle_in_transaction_session_timeout = 60000;
                SET application_name = 'cupcake'
                """))
        try query(
            SQLText("SELECT set_config('statement_timeout', $1, false)"), [.text(String(statementTimeoutMilliseconds))])
    }

    deinit { close() }

    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        prepared.removeAll()
    }

    /// Whether the connection is still usable (libpq noticed no break).
    var isHealthy: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// A parameter of a statement.
    enum Value {
        case text(String)
        case integer(Int64)
        case boolean(Bool)
        case bytes([UInt8])
        case null
    }

    /// The rows a statement returned, as text; `nil` for SQL NULL.
    struct Rows {
        var rows: [[String?]]
        /// How many rows the statement changed (INSERT, UPDATE, DELETE).
        var affected: Int
        /// Column `column` of row `row` as an integer (0 when NULL or not a number).
        func integer(_ row: Int, _ column: Int) -> Int64 { rows[row][column].flatMap { Int64($0) } ?? 0 }
        func text(_ row: Int, _ column: Int) -> String { rows[row][column] ?? "" }
        func boolean(_ row: Int, _ column: Int) -> Bool { rows[row][column] == "t" }
        /// A bytea column (PostgreSQL's hex format, `\x…`).
        func bytes(_ row: Int, _ column: Int) -> [UInt8] {
            guard let text = rows[row][column], text.hasPrefix("\\x") else { return [] }
            var bytes: [UInt8] = []
            bytes.reserveCapacity((text.utf8.count - 2) / 2)
            var high: UInt8?
            for byte in text.utf8.dropFirst(2) {
                let nibble: UInt8
                switch byte {
                case 0x30...0x39: nibble = byte - 0x30
                case 0x61...0x66: nibble = byte - 0x61 + 10
                case 0x41...0x46: nibble = byte - 0x41 + 10
                default: continue
                }
                if let first = high {
                    bytes.append(first << 4 | nibble)
                    high = nil
                } else {
                    high = nibble
                }
            }
            return bytes
        }
    }

    /// Runs constant SQL with no parameters (one or more statements).
    func execute(_ sql: SQLText) throws(StorageError) {
        guard let handle else { throw StorageError(.temporary, "the PostgreSQL connection is closed") }
        let result = PQexec(handle, sql.text)
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs a statement built with its parameters (``PostgresQuery``).
    @discardableResult
    func query(_ query: PostgresQuery) throws(StorageError) -> Rows {
        try self.query(query.sql, query.values)
    }

    /// Runs one statement with parameters, prepared on this connection the first time.
    @discardableResult
    func query(_ sql: SQLText, _ values: [Value] = [], types: [Oid] = []) throws(StorageError) -> Rows {
        guard let handle else { throw StorageError(.temporary, "the PostgreSQL connection is closed") }
        let name: String
        if let known = prepared[sql.text] {
            name = known
        } else {
            name = "s\(prepared.count + 1)"
            // Declared types let a statement take parameters it does not use (list plans).
            let result = PQprepare(handle, name, sql.text, Int32(types.count), types.isEmpty ? nil : types)
            defer { PQclear(result) }
            try check(result)
            prepared[sql.text] = name
        }
        var texts: [[CChar]?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for value in values {
            switch value {
            case .text(let text):
                texts.append(Array(text.utf8CString))
                lengths.append(0)
                formats.append(0)
            case .integer(let number):
                texts.append(Array(String(number).utf8CString))
                lengths.append(0)
                formats.append(0)
            case .boolean(let flag):
                texts.append(Array((flag ? "t" : "f").utf8CString))
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                texts.append(bytes.map { CChar(bitPattern: $0) } + [0])
                lengths.append(Int32(bytes.count))
                formats.append(1)
            case .null:
                texts.append(nil)
                lengths.append(0)
                formats.append(0)
            }
        }
        notices.replicationWaitCanceled = false
        let result = Self.withPointers(texts) { pointers in
            PQexecPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 0)
        }
        defer { PQclear(result) }
        try check(result)
        // Committed here but not confirmed by the synchronous standby: the same as a connection
        // that broke after COMMIT was sent. Not reported as stored (503); a retry with the key
        // finds it.
        if notices.replicationWaitCanceled {
            notices.replicationWaitCanceled = false
            throw StorageError(
                .temporary, "PostgreSQL stopped waiting for the synchronous standby: the outcome is unknown")
        }
        guard let result else { return Rows(rows: [], affected: 0) }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var columns: [String?] = []
            columns.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    columns.append(nil)
                } else {
                    columns.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(columns)
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return Rows(rows: rows, affected: affected)
    }

    /// Calls `body` with C strings for each text, alive for the call.
    private static func withCStrings<T>(_ texts: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        withPointers(texts.map { Array($0.utf8CString) }, body)
    }

    /// Calls `body` with C pointers to each text (NULL for nil), alive for the call.
    private static func withPointers<T>(_ texts: [[CChar]?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        var pointers: [UnsafePointer<CChar>?] = []
        var buffers: [UnsafeMutablePointer<CChar>] = []
        defer { buffers.forEach { $0.deallocate() } }
        for text in texts {
            guard let text else {
                pointers.append(nil)
                continue
            }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: text.count)
            buffer.initialize(from: text, count: text.count)
            buffers.append(buffer)
            pointers.append(UnsafePointer(buffer))
        }
        return body(pointers)
    }

    /// Throws the result's error, if it is one.
    private func check(_ result: OpaquePointer?) throws(StorageError) {
        let status = result.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let state =
            result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) } ?? ""
        let text =
            result.flatMap { PQresultErrorMessage($0) }.map { Self.message($0) }
            ?? handle.map { Self.message(PQerrorMessage($0)) } ?? "no result"
        throw StorageError(
            Self.code(state: state, healthy: isHealthy), "\(text) (SQLSTATE \(state.isEmpty ? "none" : state))")
    }

    /// What a SQLSTATE means to the caller.
    static func code(state: String, healthy: Bool) -> StorageError.Code {
        if !healthy { return .temporary }  // the connection broke: nothing is known to be stored
        switch state {
        // CC409: cupcake_claims_held(), an Idempotency-Key's claim was taken over.
        case "23505", "23503", "23514", "CC409": return .conflict
        // Connection exceptions, insufficient resources, operator intervention (shutdown,
        // cancel, timeout), serialization failures and deadlocks: try again later.
        case let code
        where code.hasPrefix("08") || code.hasPrefix("53") || code.hasPrefix("57") || code.hasPrefix("58"):
            return .temporary
        case "40001", "40P01", "55P03": return .temporary
        default: return .failed
        }
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        text.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
    }
}
