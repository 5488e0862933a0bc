import CupcakeDomain
import Foundation
import Synchronization

/// The SQLite engine's order SQL: WAL mode, prepared statements only, a versioned schema. The
/// database itself (its connections, checkpoints and halts) is a ``SQLiteDatabase``; this type
/// numbers orders, keeps their counts and runs the statements.
public final class SQLiteOrderStore: OrderStore, OrderBackup, @unchecked Sendable {
    // Safe: `lastCreatedAt` and `lastID` are only touched inside the database's writer
    // (``SQLiteDatabase/withWriter(_:)``, which holds its write lock) or in init; `counts` is
    // guarded by `countsLock`.
    private let database: SQLiteDatabase
    /// The newest created_at_ms written; guarded by the write lock. New orders never get an earlier
    /// time, so id order is time order (a clock stepping back cannot reorder the history).
    private var lastCreatedAt: Int64 = 0
    /// The largest id handed out since the database was opened (or found in it then); guarded by
    /// the write lock. The store numbers new orders itself, so cancelling the newest order does not
    /// give its id to the next one while the store is open.
    private var lastID: Int64 = 0
    /// Orders per (type, favourite); guarded by `countsLock`, changed only after a commit (the
    /// changes add up, so their order does not matter).
    private var counts = OrderCounts()
    private let countsLock = NSLock()
    /// Idempotency-Keys claimed by requests in flight.
    private let inFlight = InFlightKeys()
    public let location: String
    public var databasePath: String { location }
    public let durability: String
    public var backups: (any OrderBackup)? { self }

    /// Opens (creating if needed) and migrates the database at `path`.
    ///
    /// - Parameters:
    ///   - walRestartFrames: the WAL size (in 4 KiB frames) past which it is started over.
    /// - Throws: ``StorageError`` when it cannot be opened, or its schema is newer than this build.
    public init(path: String, durability: Durability = .full, walRestartFrames: Int = 4096) throws(StorageError) {
        location = path
        self.durability = durability.summary
        var state = State()
        database = try SQLiteDatabase(
            path: path, durability: durability, walRestartFrames: walRestartFrames,
            migrations: SQLiteSchema.migrations
        ) { writer throws(StorageError) in state = try State(writer) }
        lastCreatedAt = state.lastCreatedAt
        lastID = state.lastID
        counts = state.counts
    }

    /// The schema version on disk.
    public func schemaVersion() throws(StorageError) -> Int {
        try withWriter { connection throws(StorageError) in try connection.integerPragma("PRAGMA user_version") }
    }

    /// The newest schema version this build knows.
    public static var latestSchemaVersion: Int { SQLiteSchema.migrations.count }

    public func readiness() -> String? { database.readiness() }

    public func close() { database.close() }

    func withWriter<T>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try database.withWriter(body)
    }

    func withReader<T>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try database.withReader(body)
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
                try? reloadState(connection)
                throw error
            }
            lastCreatedAt = last
            lastID = nextID - 1
            countsLock.withLock { counts.add(added) }
            return stored
        }
    }

    /// The newest time and id and the counts, as the database holds them.
    private struct State {
        var lastCreatedAt: Int64 = 0
        var lastID: Int64 = 0
        var counts = OrderCounts()

        init() {}

        /// Reads them through the writer (under the write lock, or in init).
        init(_ writer: SQLiteConnection) throws(StorageError) {
            lastCreatedAt = Int64(try writer.integerPragma("SELECT coalesce(max(created_at_ms), 0) FROM orders"))
            lastID = Int64(
                try writer.integerPragma(
                    "SELECT max(coalesce((SELECT max(id) FROM orders), 0), coalesce((SELECT last_id FROM order_id_floor), 0))"
                ))
            counts = try OrderCounts.load(writer)
        }
    }

    /// Takes the numbering and counts from what the database now holds; needs the write lock.
    private func reloadState(_ writer: SQLiteConnection) throws(StorageError) {
        let state = try State(writer)
        lastCreatedAt = state.lastCreatedAt
        lastID = state.lastID
        countsLock.withLock { counts = state.counts }
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
                added.add(type: record.order.type, favorite: record.isFavorite, status: .placed, 1)
            }
            // Each order's placement, the first event of its history, from the rows just written.
            if let first = stored.first, let last = stored.last {
                try connection.withStatement(
                    """
                    INSERT OR ROLLBACK INTO order_events (order_id, version, status, at_ms, actor)
                    SELECT id, 1, 'placed', created_at_ms, 'customer' FROM orders WHERE id BETWEEN ? AND ?
                    """
                ) { events throws(StorageError) in
                    events.bind(1, first.id)
                    events.bind(2, last.id)
                    try events.step()
                }
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

    public func order(id: Int64, history: Bool) throws(StorageError) -> StoredOrder? {
        try withReader { connection throws(StorageError) in
            guard var order = try Self.order(id: id, connection) else { return nil }
            if history { order.history = try Self.history(of: order, connection) }
            return order
        }
    }

    private static func order(id: Int64, _ connection: SQLiteConnection) throws(StorageError) -> StoredOrder? {
        try connection.withStatement(orderByID) { query throws(StorageError) in
            query.bind(1, id)
            guard try query.step() else { return nil }
            return StoredOrder(row: SQLiteOrderRow(statement: query))
        }
    }

    /// The order's history, up to its version (see ``StatusHistory``).
    private static func history(of order: StoredOrder, _ connection: SQLiteConnection) throws(StorageError)
        -> [StatusChange]
    {
        var events: [(version: Int64, change: StatusChange)] = []
        try connection.withStatement(
            "SELECT version, status, at_ms, actor, reason FROM order_events WHERE order_id = ? ORDER BY id"
        ) { query throws(StorageError) in
            query.bind(1, order.id)
            while try query.step() {
                guard
                    let change = StatusHistory.change(
                        status: query.string(1), atMilliseconds: query.int64(2), actor: query.string(3),
                        reason: query.optionalString(4))
                else { continue }
                events.append((query.int64(0), change))
            }
        }
        return StatusHistory.history(of: order, events: events)
    }

    private static let orderByID = SQLText("SELECT") + OrderColumn.selectList + SQLText("FROM orders WHERE id = ?")

    public func orderCount() throws(StorageError) -> Int {
        try database.checkOpen()
        return countsLock.withLock { counts.total(statuses: OrderQuery.defaultStatuses) }
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
            return countsLock.withLock {
                counts.total(type: query.type, favorite: query.favorite, statuses: query.statuses)
            }
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
        let all = countsLock.withLock { counts.total() }
        if query.namePrefix == nil, query.type == nil, query.favorite == nil, query.filtersStatus,
            !query.statuses.contains(.placed), query.sort.key == .createdAt
        {
            // A few statuses among many orders (the orders in the oven among years of delivered
            // ones): take their ranges of the status index (which leaves placed orders out) and
            // sort them, rather than walk every order by time; the matches are counted in memory.
            let window = Double(query.offset + query.limit)
            let walk = matches == 0 ? Double.infinity : window * Double(all) / Double(matches)
            return SQLiteListPlan(query, rangeOfStatuses: Double(matches) < walk)
        }
        guard query.namePrefix != nil, query.sort.key != .name, matches > 0 else { return SQLiteListPlan(query) }
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

    public func change(id: Int64, _ change: OrderChange) throws(StorageError) -> OrderChangeOutcome {
        // (the outcome, the counts' move: the type and the (favourite, status) before and after)
        typealias CountMove = (type: Int, from: (Bool, OrderStatus), to: (Bool, OrderStatus))
        let (outcome, moved) = try withWriter { connection throws(StorageError) -> (OrderChangeOutcome, CountMove?) in
            try connection.transaction { () throws(StorageError) -> (OrderChangeOutcome, CountMove?) in
                guard var order = try Self.order(id: id, connection) else { return (.notFound, nil) }
                let plan = change.plan(status: order.status, favorite: order.isFavorite, version: order.version)
                guard case .apply(let status, let favorite) = plan else {
                    order.history = try Self.history(of: order, connection)
                    switch plan {
                    case .versionMismatch: return (.versionMismatch(order), nil)
                    case .refused(let refusal): return (.refused(refusal, order), nil)
                    default: return (.unchanged(order), nil)
                    }
                }
                let before = (order.isFavorite, order.status)
                let statusMoved = status != order.status
                order.version += 1
                order.isFavorite = favorite
                if statusMoved {
                    order.status = status
                    order.statusChangedAtMilliseconds = change.atMilliseconds
                }
                try connection.withStatement(
                    """
                    UPDATE orders SET is_favorite = ?, status = ?, status_changed_at_ms = ?, version = ?
                    WHERE id = ?
                    """
                ) { update throws(StorageError) in
                    update.bind(1, order.isFavorite)
                    update.bind(2, order.status.wireName)
                    update.bind(3, order.statusChangedAtMilliseconds)
                    update.bind(4, order.version)
                    update.bind(5, order.id)
                    try update.step()
                }
                if statusMoved, let move = change.move {
                    try connection.withStatement(
                        "INSERT INTO order_events (order_id, version, status, at_ms, actor, reason) VALUES (?, ?, ?, ?, ?, ?)"
                    ) { event throws(StorageError) in
                        event.bind(1, order.id)
                        event.bind(2, order.version)
                        event.bind(3, status.wireName)
                        event.bind(4, change.atMilliseconds)
                        event.bind(5, move.actor.rawValue)
                        if let reason = move.reason { event.bind(6, reason) }
                        try event.step()
                    }
                }
                order.history = try Self.history(of: order, connection)
                return (.changed(order), (order.order.type, before, (order.isFavorite, order.status)))
            }
        }
        if let moved {
            countsLock.withLock {
                counts.add(type: moved.type, favorite: moved.from.0, status: moved.from.1, -1)
                counts.add(type: moved.type, favorite: moved.to.0, status: moved.to.1, 1)
            }
        }
        return outcome
    }

    public func events(after position: EventPosition, orderID: Int64?, limit: Int) throws(StorageError)
        -> [OrderEvent]
    {
        try withReader { connection throws(StorageError) in
            let sql: StaticString =
                orderID == nil
                ? "SELECT id, order_id, version, status, at_ms, actor, reason FROM order_events WHERE id > ? ORDER BY id LIMIT ?"
                : """
                SELECT id, order_id, version, status, at_ms, actor, reason FROM order_events
                WHERE id > ? AND order_id = ? ORDER BY id LIMIT ?
                """
            return try connection.withStatement(sql) { query throws(StorageError) in
                query.bind(1, position.id)
                if let orderID {
                    query.bind(2, orderID)
                    query.bind(3, limit)
                } else {
                    query.bind(2, limit)
                }
                var events: [OrderEvent] = []
                while try query.step() {
                    guard
                        let change = StatusHistory.change(
                            status: query.string(3), atMilliseconds: query.int64(4), actor: query.string(5),
                            reason: query.optionalString(6))
                    else { continue }
                    events.append(
                        OrderEvent(
                            position: EventPosition(id: query.int64(0)), orderID: query.int64(1),
                            version: query.int64(2), change: change))
                }
                return events
            }
        }
    }

    public func latestEventPosition() throws(StorageError) -> EventPosition {
        try withReader { connection throws(StorageError) in
            EventPosition(id: Int64(try connection.integerPragma("SELECT coalesce(max(id), 0) FROM order_events")))
        }
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
}

/// A row of a SQLite statement selected with ``OrderColumn/selectList``.
struct SQLiteOrderRow: OrderRow {
    let statement: SQLiteStatement

    func integer(_ column: OrderColumn) -> Int64 { statement.int64(column.position) }
    func boolean(_ column: OrderColumn) -> Bool { statement.bool(column.position) }
    func text(_ column: OrderColumn) -> String { statement.string(column.position) }
    func bytes(_ column: OrderColumn) -> [UInt8] { statement.bytes(column.position) }
}
