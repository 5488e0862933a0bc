import CupcakeDomain
import Foundation
import Synchronization

/// How hard a commit tries to reach the disk.
public enum Durability: String, Sendable, CaseIterable {
    /// WAL with `synchronous=FULL` (the default): every commit's WAL frames are fsynced before it
    /// returns, so an acknowledged order survives a power loss or an OS crash. Group commit
    /// shares one fsync among the orders of a batch.
    case full
    /// WAL with `synchronous=NORMAL`: a commit survives the process being killed (kill -9), but
    /// the WAL is fsynced only at checkpoints, so a power loss or an OS crash can lose orders
    /// already answered 201. An explicit choice, named with its risk wherever it is shown.
    case process

    /// What it promises, for the startup line.
    public var summary: String {
        switch self {
        case .full: "durability full (each commit fsynced before it is answered)"
        case .process:
            "durability process (survives kill -9; a power loss or OS crash can lose orders already answered)"
        }
    }
}

/// The SQLite engine: WAL mode, prepared statements only, a versioned schema.
///
/// One writer connection (serialized by `writeLock`) and a small pool of reader connections,
/// which WAL lets run beside the writer.
public final class SQLiteOrderStore: OrderStore, OrderBackup, @unchecked Sendable {
    // Safe: `writer` is used only while holding `writeLock`; each reader is used by one thread
    // at a time, handed out and taken back under `readersLock`; `closed` is guarded by both.
    private let writer: SQLiteConnection
    private let writeLock = NSLock()
    private let checkpointTurn = CheckpointTurn()
    private var readers: [SQLiteConnection] = []
    private let readersLock = NSLock()
    private var closed = false
    private var checkpointer: Checkpointer?
    /// The newest created_at_ms written; guarded by `writeLock`. New orders never get an earlier
    /// time, so id order is time order (a clock stepping back cannot reorder the history).
    private var lastCreatedAt: Int64 = 0
    /// The largest id handed out since the database was opened (or found in it then); guarded by
    /// `writeLock`. The store numbers new orders itself, so cancelling the newest order does not
    /// give its id to the next one while the store is open.
    private var lastID: Int64 = 0
    /// Orders per (type, favourite); guarded by `countsLock`, changed only after a commit (the
    /// changes add up, so their order does not matter).
    private var counts = OrderCounts()
    private let countsLock = NSLock()
    /// Idempotency-Keys claimed by requests in flight.
    private let inFlight = InFlightKeys()
    /// The database file and WAL as opened, checked after every write; set once in init.
    private var files: DatabaseFiles?
    /// The file found deleted, renamed or replaced, after which every write is refused; guarded
    /// by `writeLock`.
    private var movedFile: String?
    public let location: String
    public var databasePath: String { location }
    public let durability: String
    public var backups: (any OrderBackup)? { self }

    /// Opens (creating if needed) and migrates the database at `path`.
    ///
    /// - Parameters:
    ///   - walRestartFrames: the WAL size (in 4 KiB frames) past which it is started over.
    /// - Throws: ``StorageError`` when it cannot be opened, or its schema is newer than this build.
    /// Why the store is not ready (``readiness()``), in words fit to show anyone: the database
    /// file found moved (the store then refuses every write until a restart).
    private let notReady = Mutex<String?>(nil)

    public init(path: String, durability: Durability = .full, walRestartFrames: Int = 4096) throws(StorageError) {
        location = path
        self.durability = durability.summary
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try? FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A new database is created readable by its owner only (names and addresses), and
        // SQLite gives its WAL the database's mode. This descriptor is opened and closed before
        // SQLite has opened the file, so there is no lock yet that closing it could drop.
        let created = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if created >= 0 { Glibc.close(created) }
        writer = try SQLiteConnection(path: path)
        try writer.execute("PRAGMA journal_mode = WAL")
        switch durability {
        case .process: try writer.execute("PRAGMA synchronous = NORMAL")
        case .full: try writer.execute("PRAGMA synchronous = FULL")
        }
        // Checkpoints run on their own thread and connection (see `Checkpointer`), so a commit
        // never stalls behind copying the WAL into the database; that stall was the p99. No
        // journal_size_limit: truncating the WAL at a restart (and its fdatasync) stalled the
        // writer for 100-300 ms; the WAL is reused from its start instead.
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try migrate()
        try loadState()
        // Both files exist now: the migrations and the state just read opened the WAL.
        files = DatabaseFiles(path: path)
        let turn = checkpointTurn
        checkpointer = try Checkpointer(path: path, durability: durability, restartFrames: walRestartFrames) {
            [writeLock] body in
            // Ask writers to step aside, then take the lock: an unfair lock alone would let a
            // writer that never pauses (a bulk load) starve the checkpoint.
            turn.withLock { turn.waiting = true }
            writeLock.withLock(body)
            turn.withLock {
                turn.waiting = false
                turn.condition.broadcast()
            }
        }
    }

    deinit { close() }

    /// The schema version on disk.
    public func schemaVersion() throws(StorageError) -> Int {
        try withWriter { connection throws(StorageError) in try connection.integerPragma("PRAGMA user_version") }
    }

    /// The newest schema version this build knows.
    public static var latestSchemaVersion: Int { SQLiteSchema.migrations.count }

    private func migrate() throws(StorageError) {
        let current = try writer.integerPragma("PRAGMA user_version")
        let migrations = SQLiteSchema.migrations
        guard current <= migrations.count else {
            throw StorageError(
                .schemaTooNew, "database schema \(current) is newer than this cupcake understands (\(migrations.count))"
            )
        }
        for migration in migrations.dropFirst(current) {
            try writer.transaction { () throws(StorageError) in
                try writer.execute(migration.sql)
                try migration.backfill?(writer)
            }
        }
    }

    public func insert(_ batch: [NewOrder]) throws(StorageError) -> [StoredOrder] {
        try withWriter { connection throws(StorageError) in
            var last = lastCreatedAt
            var nextID = lastID + 1
            var added = OrderCounts()
            let stored: [StoredOrder]
            do throws(StorageError) {
                stored = try insertTransaction(batch, connection, last: &last, nextID: &nextID, added: &added)
            } catch {
                // Rolled back, or (if its WAL could not be written after all) perhaps not:
                // take the numbering and counts from what the database now holds.
                try? loadState()
                throw error
            }
            lastCreatedAt = last
            lastID = nextID - 1
            countsLock.withLock { counts.add(added) }
            return stored
        }
    }

    /// The newest time and id and the counts, from the database; needs the write lock (or init).
    private func loadState() throws(StorageError) {
        lastCreatedAt = Int64(try writer.integerPragma("SELECT coalesce(max(created_at_ms), 0) FROM orders"))
        lastID = Int64(
            try writer.integerPragma(
                "SELECT max(coalesce((SELECT max(id) FROM orders), 0), coalesce((SELECT last_id FROM order_id_floor), 0))"
            ))
        let loaded = try OrderCounts.load(writer)
        countsLock.withLock { counts = loaded }
    }

    private func insertTransaction(
        _ batch: [NewOrder], _ connection: SQLiteConnection, last: inout Int64, nextID: inout Int64,
        added: inout OrderCounts
    ) throws(StorageError) -> [StoredOrder] {
        try connection.transaction { () throws(StorageError) -> [StoredOrder] in
            var items = batch
            for index in items.indices {
                items[index].createdAtMilliseconds = max(items[index].createdAtMilliseconds, last)
                last = items[index].createdAtMilliseconds
            }
            var stored: [StoredOrder] = []
            stored.reserveCapacity(items.count)
            var start = 0
            while start < items.count {
                // A few statement sizes cover any batch: 13 rows are one of 8, one of 4, one.
                let rows = Self.rowsPerStatement.first { $0 <= items.count - start } ?? 1
                try Self.insertOrders(items[start..<start + rows], firstID: nextID, connection, into: &stored)
                nextID += Int64(rows)
                start += rows
            }
            for (item, record) in zip(items, stored) {
                if let claim = item.idempotency {
                    try Self.insertKey(claim, for: record, connection)
                }
                added.add(type: record.order.type, favorite: record.isFavorite, 1)
            }
            return stored
        }
    }

    /// The row counts of the prepared multi-row inserts, largest first.
    private static let rowsPerStatement = [32, 16, 8, 4, 2, 1]

    /// Inserts `items` with one statement, numbered from `firstID`, and appends them to `stored`.
    private static func insertOrders(
        _ items: ArraySlice<NewOrder>, firstID: Int64, _ connection: SQLiteConnection,
        into stored: inout [StoredOrder]
    ) throws(StorageError) {
        let rows = items.enumerated().map { offset, item in
            StoredOrder(
                id: firstID + Int64(offset), order: item.order, costCents: item.costCents,
                createdAtMilliseconds: item.createdAtMilliseconds, isFavorite: item.isFavorite,
                receiptHash: item.receiptHash)
        }
        try connection.withStatement(insertSQL.repeatingValues(rows: rows.count)) { insert throws(StorageError) in
            var index: Int32 = 1
            for row in rows {
                for column in OrderColumn.inserted {
                    switch column.value(of: row) {
                    case .integer(let value): insert.bind(index, value)
                    case .boolean(let value): insert.bind(index, value)
                    case .text(let value): insert.bind(index, value)
                    case .bytes(let value?): insert.bind(index, bytes: value)
                    case .bytes(nil): break  // NULL
                    }
                    index += 1
                }
            }
            try insert.step()
        }
        stored += rows
    }

    /// One row's INSERT. OR ROLLBACK: a failing row fails the whole transaction (which the group
    /// committer then retries order by order), so SQLite needs no statement journal to undo the
    /// rows before it; with the default ABORT, a multi-row INSERT copied every page it changed
    /// into a temporary file first, and bulk loads ran at half the speed of single rows.
    private static let insertSQL =
        SQLText("INSERT OR ROLLBACK INTO orders (") ++ OrderColumn.insertList ++ SQLText(") VALUES")
        + SQLText.placeholders(OrderColumn.inserted.count)

    private static func insertKey(
        _ claim: IdempotencyClaim, for record: StoredOrder, _ connection: SQLiteConnection
    ) throws(StorageError) {
        try connection.withStatement(
            """
            INSERT INTO idempotency_keys (key, fingerprint, status, body, order_id, created_at_ms)
            VALUES (?, ?, ?, ?, ?, ?)
            """
        ) { key throws(StorageError) in
            key.bind(1, claim.key)
            key.bind(2, bytes: claim.fingerprint)
            key.bind(3, claim.status)
            key.bind(4, bytes: claim.render(record))
            key.bind(5, record.id)
            key.bind(6, record.createdAtMilliseconds)
            try key.step()
        }
    }

    public func order(id: Int64) throws(StorageError) -> StoredOrder? {
        try withReader { connection throws(StorageError) in
            try connection.withStatement(Self.orderByID) { query throws(StorageError) in
                query.bind(1, id)
                guard try query.step() else { return nil }
                return StoredOrder(row: SQLiteOrderRow(statement: query))
            }
        }
    }

    private static let orderByID = SQLText("SELECT") + OrderColumn.selectList + SQLText("FROM orders WHERE id = ?")

    public func orderCount() throws(StorageError) -> Int {
        try checkOpen()
        return countsLock.withLock { counts.total() }
    }

    public func list(_ query: OrderQuery) throws(StorageError) -> OrderPage {
        try withReader { connection throws(StorageError) in
            let total = try total(query, connection)
            let plan = planned(query, matches: total)
            let orders = try connection.withStatement(plan.select) { select throws(StorageError) in
                plan.bind(select, query, window: true)
                var orders: [StoredOrder] = []
                orders.reserveCapacity(min(query.limit + 1, 129))
                while try select.step() { orders.append(StoredOrder(row: SQLiteOrderRow(statement: select))) }
                return orders
            }
            // The plan asks for one order more than the page, to tell whether another follows.
            return OrderPage(
                orders: Array(orders.prefix(query.limit)), total: total, hasMore: orders.count > query.limit)
        }
    }

    /// How many orders match: from memory without a name filter, else counted in the name index.
    private func total(_ query: OrderQuery, _ connection: SQLiteConnection) throws(StorageError) -> Int {
        guard query.namePrefix != nil else {
            return countsLock.withLock { counts.total(type: query.type, favorite: query.favorite) }
        }
        let counted = SQLiteListPlan(query)
        return try connection.withStatement(counted.count) { count throws(StorageError) in
            counted.bind(count, query, window: false)
            return try count.step() ? count.int(0) : 0
        }
    }

    /// Chooses how to serve a name-prefix query sorted by time, cost or type. Taking the name
    /// range and sorting it reads every match (`m` rows); walking the sort's index and filtering
    /// reads about `(offset + limit) × n / m` rows of the `n` in all. Few matches (a customer's
    /// name) favour the range; many (one letter) favour the walk.
    private func planned(_ query: OrderQuery, matches: Int) -> SQLiteListPlan {
        guard query.namePrefix != nil, query.sort.key != .name, matches > 0 else { return SQLiteListPlan(query) }
        let all = countsLock.withLock { counts.total() }
        let window = Double(query.offset + query.limit)
        return SQLiteListPlan(query, walkSortIndex: window * Double(all) / Double(matches) < Double(matches))
    }

    /// SQLite's plan for a list query, one line per step: lets tests show that each filter is an
    /// index range scan.
    public func explain(_ query: OrderQuery) throws(StorageError) -> [String] {
        try withReader { connection throws(StorageError) in
            let plan = planned(query, matches: try total(query, connection))
            return try connection.withStatement(SQLText("EXPLAIN QUERY PLAN") + plan.select) {
                explain throws(StorageError) in
                plan.bind(explain, query, window: true)
                var lines: [String] = []
                while try explain.step() { lines.append(explain.string(3)) }
                return lines
            }
        }
    }

    public func setFavorite(id: Int64, _ isFavorite: Bool) throws(StorageError) -> StoredOrder? {
        // (exists, the type of the order whose mark changed)
        let (exists, changedType) = try withWriter { connection throws(StorageError) -> (Bool, Int?) in
            try connection.transaction { () throws(StorageError) -> (Bool, Int?) in
                let type = try connection.withStatement(
                    "UPDATE orders SET is_favorite = ? WHERE id = ? AND is_favorite <> ? RETURNING type"
                ) { update throws(StorageError) -> Int? in
                    update.bind(1, isFavorite)
                    update.bind(2, id)
                    update.bind(3, isFavorite)
                    guard try update.step() else { return nil }
                    let type = update.int(0)
                    while try update.step() {}
                    return type
                }
                if let type { return (true, type) }
                let exists = try connection.withStatement("SELECT 1 FROM orders WHERE id = ?") {
                    query throws(StorageError) in
                    query.bind(1, id)
                    return try query.step()
                }
                return (exists, nil)
            }
        }
        if let type = changedType {
            countsLock.withLock {
                counts.add(type: type, favorite: !isFavorite, -1)
                counts.add(type: type, favorite: isFavorite, 1)
            }
        }
        return exists ? try order(id: id) : nil
    }

    public func delete(id: Int64) throws(StorageError) -> Bool {
        let removed = try withWriter { connection throws(StorageError) -> (Int, Bool)? in
            try connection.transaction { () throws(StorageError) -> (Int, Bool)? in
                let row = try connection.withStatement(
                    "DELETE FROM orders WHERE id = ? RETURNING type, is_favorite"
                ) { delete throws(StorageError) -> (Int, Bool)? in
                    delete.bind(1, id)
                    guard try delete.step() else { return nil }
                    let row = (delete.int(0), delete.bool(1))
                    while try delete.step() {}
                    return row
                }
                if row != nil, id >= lastID {
                    // The newest order: remember its id, which the table no longer shows.
                    try connection.withStatement(
                        "INSERT OR REPLACE INTO order_id_floor (single, last_id) VALUES (1, ?)"
                    ) { floor throws(StorageError) in
                        floor.bind(1, id)
                        try floor.step()
                    }
                }
                return row
            }
        }
        guard let (type, favorite) = removed else { return false }
        countsLock.withLock { counts.add(type: type, favorite: favorite, -1) }
        return true
    }

    /// Loads many orders fast, for benchmarks and imports: one transaction per `batchSize`,
    /// calling `progress` with the number loaded after each.
    public func bulkInsert(count: Int, batchSize: Int, make: (Int) -> NewOrder, progress: (Int) -> Void)
        throws(StorageError)
    {
        // A big page cache while loading keeps the five indexes' pages in memory instead of
        // re-reading them from the OS for every batch; the usual small cache comes back after.
        try withWriter { connection throws(StorageError) in try connection.execute("PRAGMA cache_size = -262144") }
        defer {
            try? withWriter { connection throws(StorageError) in try connection.execute("PRAGMA cache_size = -2000") }
        }
        try insertInBatches(count: count, batchSize: batchSize, make: make, progress: progress)
    }

    public func idempotencyRecord(key: String) throws(StorageError) -> IdempotencyRecord? {
        try withReader { connection throws(StorageError) in
            try connection.withStatement(
                "SELECT fingerprint, status, body, order_id, created_at_ms FROM idempotency_keys WHERE key = ?"
            ) { query throws(StorageError) in
                query.bind(1, key)
                guard try query.step() else { return nil }
                return IdempotencyRecord(
                    key: key, fingerprint: query.bytes(0), status: query.int(1), body: query.bytes(2),
                    orderID: query.int64(3), createdAtMilliseconds: query.int64(4))
            }
        }
    }

    public func claimIdempotencyKey(_ key: String, fingerprint: [UInt8], nowMilliseconds: Int64)
        throws(StorageError) -> IdempotencyClaimResult
    {
        guard inFlight.begin(key) else { return .inFlight }
        do {
            if let record = try idempotencyRecord(key: key) {
                inFlight.end(key)
                return .used(record)
            }
        } catch {
            inFlight.end(key)
            throw error
        }
        return .claimed
    }

    public func releaseIdempotencyKey(_ key: String, committed: Bool) {
        inFlight.end(key)
    }

    public func purgeIdempotencyKeys(recordedBefore milliseconds: Int64) throws(StorageError) -> Int {
        // In a transaction, like every write here.
        try withWriter { connection throws(StorageError) in
            try connection.transaction { () throws(StorageError) -> Int in
                try connection.withStatement("DELETE FROM idempotency_keys WHERE created_at_ms < ?") {
                    delete throws(StorageError) in
                    delete.bind(1, milliseconds)
                    try delete.step()
                    return connection.changes
                }
            }
        }
    }

    /// Copies the database with `VACUUM INTO` on a reader connection: one read transaction, so
    /// the copy is the database as of its start, and writers go on beside it (WAL). SQLite writes
    /// the copy itself; nothing here opens the live database file.
    public func backup(to path: String) throws(StorageError) {
        try withReader { connection throws(StorageError) in
            try connection.withStatement("VACUUM INTO ?") { vacuum throws(StorageError) in
                vacuum.bind(1, path)
                try vacuum.step()
            }
        }
    }

    /// Checks a database file that is not in use (a downloaded backup): SQLite's
    /// `integrity_check`, and a schema this build understands.
    ///
    /// - Returns: how many orders it holds.
    /// - Throws: ``StorageError`` saying what is wrong.
    public static func verify(path: String) throws(StorageError) -> Int {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let integrity = try connection.withStatement("PRAGMA integrity_check") { check throws(StorageError) in
            var lines: [String] = []
            while try check.step() { lines.append(check.string(0)) }
            return lines
        }
        guard integrity == ["ok"] else {
            throw StorageError(.failed, "integrity check failed: \(integrity.prefix(3).joined(separator: "; "))")
        }
        let version = try connection.integerPragma("PRAGMA user_version")
        guard (1...latestSchemaVersion).contains(version) else {
            throw StorageError(.schemaTooNew, "schema version \(version) is not one this cupcake knows")
        }
        return try connection.integerPragma("SELECT count(*) FROM orders")
    }

    public func close() {
        // After a failed fsync nothing may checkpoint (see Checkpointer), SQLite's own
        // checkpoint when the last connection closes included: the WAL stays whole, and the next
        // start copies it into the database again.
        let failed = checkpointer?.failure != nil
        checkpointer?.stop()
        writeLock.withLock {
            readersLock.withLock {
                guard !closed else { return }
                closed = true
                readers.forEach {
                    if failed { $0.keepWALOnClose() }
                    $0.close()
                }
                readers.removeAll()
            }
            if failed { writer.keepWALOnClose() }
            writer.close()
        }
    }

    // MARK: - Connections

    private func checkOpen() throws(StorageError) {
        if readersLock.withLock({ closed }) { throw StorageError(.unavailable, "database is closed") }
    }

    func withWriter<T>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        checkpointTurn.waitWhileCheckpointing()
        writeLock.lock()
        defer { writeLock.unlock() }
        if readersLock.withLock({ closed }) { throw StorageError(.unavailable, "database is closed") }
        if let movedFile { throw Self.movedError(movedFile) }
        if let failure = checkpointer?.failure { throw failure }
        let result: T
        do {
            result = try body(writer)
        } catch {
            // A commit whose fsync failed (with full durability every commit fsyncs the WAL)
            // stops every write until a restart, as a failed sync of the checkpointer does: the
            // kernel reports a write-back error once, so the next commit's fsync succeeding
            // would prove nothing. Without this, the writes stopped only if the checkpointer's
            // own sync of the WAL (every 10 ms) ran while the disk was failing. A failed write
            // (EFBIG past a file-size limit is SQLite's IOERR_WRITE) is answered 503 and may be
            // retried, as a full disk is: nothing it wrote was reported written.
            if let failure = Checkpointer.failedSync(error) { checkpointer?.halt(failure) }
            throw error
        }
        // Before anyone is told that the write committed: a commit into a file that has been
        // deleted or renamed is lost to a restart (see DatabaseFiles).
        if let moved = files?.moved() {
            movedFile = moved
            notReady.withLock { $0 = Self.movedReadiness }
            // Everything committed so far goes into the database file the store has open (if
            // only the WAL was removed, that saves it), and the WAL is emptied, so that a WAL
            // left behind under the old name holds nothing to replay into another database.
            try? writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            throw Self.movedError(moved)
        }
        return result
    }

    private static let movedReadiness =
        "the database file was deleted, renamed or replaced while the server had it open; restart cupcake serve"

    /// Not ready once it refuses writes: closed, halted after a failed fsync (its own or the
    /// checkpointer's), or its database file or WAL deleted, renamed or replaced (noticed here
    /// too, before any write meets it). Each lasts until a restart.
    public func readiness() -> String? {
        if readersLock.withLock({ closed }) { return "the database is closed" }
        if checkpointer?.failure != nil {
            return "a write to the database's disk failed (fsync), so no order is stored until cupcake serve is "
                + "restarted on a sound disk"
        }
        if let reason = notReady.withLock({ $0 }) { return reason }
        if files?.moved() != nil { return Self.movedReadiness }
        return nil
    }

    private static func movedError(_ path: String) -> StorageError {
        StorageError(
            .temporary,
            "\(path) was deleted, renamed or replaced while the server had it open; no order is stored until "
                + "cupcake serve is restarted (put the file back first if it was renamed)")
    }

    func withReader<T>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        let connection = try checkOutReader()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOutReader() throws(StorageError) -> SQLiteConnection {
        enum Checkout { case closed, pooled(SQLiteConnection), none }
        let checkout: Checkout = readersLock.withLock {
            if closed { return .closed }
            return readers.popLast().map(Checkout.pooled) ?? .none
        }
        switch checkout {
        case .closed: throw StorageError(.unavailable, "database is closed")
        case .pooled(let connection): return connection
        case .none: return try SQLiteConnection(path: location)
        }
    }

    private func checkIn(_ connection: SQLiteConnection) {
        let keep = readersLock.withLock { () -> Bool in
            guard !closed, readers.count < 8 else { return false }
            readers.append(connection)
            return true
        }
        if !keep {
            if checkpointer?.failure != nil { connection.keepWALOnClose() }
            connection.close()
        }
    }
}

/// Lets the checkpointer take the write lock between two transactions even when writers never
/// pause: while it waits, new writers wait for it.
final class CheckpointTurn: @unchecked Sendable {
    // Safe: `waiting` is only touched while holding `condition`.
    let condition = NSCondition()
    var waiting = false

    func withLock<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    func waitWhileCheckpointing() {
        condition.lock()
        while waiting { condition.wait() }
        condition.unlock()
    }
}

/// A row of a SQLite statement selected with ``OrderColumn/selectList``.
struct SQLiteOrderRow: OrderRow {
    let statement: SQLiteStatement

    func integer(_ column: OrderColumn) -> Int64 { statement.int64(column.position) }
    func boolean(_ column: OrderColumn) -> Bool { statement.bool(column.position) }
    func text(_ column: OrderColumn) -> String { statement.string(column.position) }
    func bytes(_ column: OrderColumn) -> [UInt8] { statement.bytes(column.position) }
}
