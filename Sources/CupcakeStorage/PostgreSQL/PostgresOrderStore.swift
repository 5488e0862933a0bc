import CPostgres
import CupcakeDomain
import Foundation

/// The PostgreSQL engine: for several `cupcake serve` instances over one database.
///
/// - Every batch the group commit gathers is one transaction of one statement (orders,
///   Idempotency-Key answers and the counts per type and favourite), committed with
///   `synchronous_commit` on before anyone is answered. Ids come from the table's sequence, so
///   they are unique across instances and never handed out twice.
/// - An Idempotency-Key is claimed in the database (a row marked in flight, with this
///   instance's claim id and an expiry), so the same key sent to two instances at once makes one
///   order, and the answer is stored in the order's own transaction. A claim an instance never
///   finished (it died) expires after ``claimSeconds`` and may then be taken over.
/// - A change of an order (its status, its favourite mark) locks its row, checks the move
///   against the status it finds, and writes the row, its history event and the counts in one
///   transaction.
/// - Totals come from `order_counts`, kept in the same transactions, so a page costs the same
///   at 10 thousand or a million orders; a name prefix is counted in its index.
/// - A connection that breaks is replaced by the pool; while the database is down every call
///   fails with a temporary error (503), and the store recovers by itself when it is back.
public final class PostgresOrderStore: OrderStore, @unchecked Sendable {
    // Safe: `pool` is thread-safe; `claims`, `unreleased` and `claimCounter` are only touched
    // while holding `claimsLock`.
    public let location: String
    /// PostgreSQL commits with `synchronous_commit` on before anyone is answered.
    public let durability = "synchronous_commit on (each commit flushed before it is answered)"
    public let concurrentWriters: Int
    let pool: PostgresPool
    private let claimsLock = NSLock()
    private var claims: [String: String] = [:]
    /// Claims whose release failed (the database was down), released at the next claim.
    private var unreleased: [(key: String, claimID: String)] = []
    /// This instance's prefix for claim ids.
    private let instance = UUID().uuidString
    private var claimCounter = 0
    /// Group-commit batches in flight at once, unless the caller says. Two: while one batch
    /// waits for its COMMIT, the next is written (1 → 2 measured +14% orders/s on 2 cores;
    /// 3 and 4 gained nothing more there; docs/SCALING.md).
    public static let defaultConcurrentWriters = 2
    /// How long an unfinished claim holds its key.
    static let claimSeconds: Int64 = 10

    /// Connects (checking the database is reachable) and migrates the schema.
    ///
    /// - Parameters:
    ///   - url: `postgres://…` or `postgresql://…`, or any connection string libpq accepts.
    ///   - poolSize: the most connections this instance opens.
    ///   - statementTimeoutMilliseconds: the longest any statement may run.
    ///   - concurrentWriters: how many group-commit batches may be in flight at once.
    public init(
        url: String, poolSize: Int, statementTimeoutMilliseconds: Int = 5_000,
        concurrentWriters: Int = PostgresOrderStore.defaultConcurrentWriters
    ) throws(StorageError) {
        location = Self.describe(url)
        self.concurrentWriters = concurrentWriters
        pool = PostgresPool(conninfo: url, size: poolSize, statementTimeoutMilliseconds: statementTimeoutMilliseconds)
        do {
            try pool.withConnection { connection throws(StorageError) in try PostgresSchema.migrate(connection) }
        } catch {
            pool.close()
            throw error.code == .temporary ? StorageError(.unavailable, error.message) : error
        }
    }

    /// "PostgreSQL at host:port/db as user", from what libpq makes of the URL; never the password.
    static func describe(_ url: String) -> String {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &error) else {
            PQfreemem(error)
            return "PostgreSQL"
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        // Several hosts (libpq's multi-host form) come as parallel lists: host1,host2 and
        // port1,port2 (one port may serve them all).
        let hosts = (values["host"] ?? values["hostaddr"] ?? "localhost").split(
            separator: ",", omittingEmptySubsequences: false)
        let ports = values["port"].map { $0.split(separator: ",", omittingEmptySubsequences: false) } ?? []
        let servers = hosts.enumerated().map { index, host in
            let port = ports.count == hosts.count ? ports[index] : ports.first
            return port.map { "\(host):\($0)" } ?? String(host)
        }
        let database = values["dbname"].map { "/\($0)" } ?? ""
        let user = values["user"].map { " as \($0)" } ?? ""
        let writable = values["target_session_attrs"].map { ", \($0)" } ?? ""
        return "PostgreSQL at \(servers.joined(separator: ","))\(database)\(user)\(writable)"
    }

    /// Ready when a pooled connection reaches a primary (one that takes writes, not a standby
    /// still in recovery: after a failover, until the promotion) whose synchronous standby, if
    /// it names one, is connected (else every COMMIT waits for it). Rows of
    /// pg_stat_replication whose state a role may not see count as connected.
    public func readiness() -> String? {
        do {
            let state = try pool.withConnection { connection throws(StorageError) -> PostgresConnection.Rows in
                try connection.query(
                    SQLText(
                        """
                        SELECT pg_is_in_recovery(),
                            current_setting('synchronous_standby_names') <> '' AND NOT EXISTS (
                                SELECT 1 FROM pg_stat_replication
                                WHERE sync_state IN ('sync', 'quorum') OR sync_state IS NULL)
                        """))
            }
            if state.text(0, 0) == "t" { return "the database is a standby in recovery and takes no writes" }
            if state.text(0, 1) == "t" {
                return "the database's synchronous standby is not connected, so no order can be committed"
            }
            return nil
        } catch {
            return "the database cannot be reached"
        }
    }

    // MARK: - Writing

    public func insert(_ batch: [NewOrder]) throws(StorageError) -> [StoredOrder] {
        guard !batch.isEmpty else { return [] }
        return try pool.withConnection { connection throws(StorageError) -> [StoredOrder] in
            // Numbers first (a sequence is not transactional: a failed batch leaves a gap, never
            // a reused id), ascending in batch order, so ids are placement order.
            let numbered = try connection.query(
                SQLText("SELECT nextval('orders_id_seq') FROM generate_series(1, $1::integer)"),
                [.integer(Int64(batch.count))])
            let newIDs = (0..<numbered.rows.count).map { numbered.integer($0, 0) }.sorted()
            let stored = zip(batch, newIDs).map { item, id in
                StoredOrder(
                    id: id, order: item.order, costCents: item.costCents,
                    createdAtMilliseconds: item.createdAtMilliseconds, isFavorite: item.isFavorite,
                    receiptHash: item.receiptHash)
            }
            let keyed = zip(batch, stored).compactMap { item, order in item.idempotency.map { ($0, order) } }
            let claimIDs = claimsLock.withLock { keyed.map { claims[$0.0.key] ?? "" } }
            var counts: [String: Int64] = [:]
            for order in stored { counts["\(order.order.type),\(order.isFavorite)", default: 0] += 1 }
            let countKeys = counts.keys.sorted()
            // One statement, so one implicit transaction and one round trip: PostgreSQL commits
            // it (durably: synchronous_commit is on) before it answers, or rolls all of it back.
            // A claim that expired and was taken over by another request makes
            // cupcake_claims_held() raise CC409 (.conflict), which rolls the whole batch back (no
            // order, no key, no count); the group commit then tries each order alone. If the
            // connection breaks while the statement is on its way, the outcome is unknown: the
            // error is temporary, nobody is told the order was stored, and a retry with the key
            // finds it stored (a replay) or claims the key again once this claim expires.
            var query = PostgresQuery(SQLText("WITH added AS (INSERT INTO orders (") ++ OrderColumn.insertList)
            query.append(SQLText(") SELECT * FROM unnest("))
            query.bind(each: OrderColumn.inserted) { query, column in
                query.bind(.text(Self.array(column, stored)), as: column.postgresArrayType)
            }
            query.append(
                SQLText(
                    """
                    ) RETURNING id, created_at_ms
                    ), placed AS (
                        INSERT INTO order_events (order_id, version, status, at_ms, actor)
                        SELECT id, 1, 'placed', created_at_ms, 'customer' FROM added
                    ), answered AS (
                        UPDATE idempotency_keys AS k
                        SET status = u.status, body = u.body, order_id = u.order_id,
                            created_at_ms = u.created_at_ms, claimed_until_ms = 0
                        FROM unnest(
                    """))
            query.bind(.text(PostgresArray.texts(keyed.map(\.0.key))), as: "text[]")
            query.append(SQLText(","))
            query.bind(.text(PostgresArray.texts(claimIDs)), as: "text[]")
            query.append(SQLText(","))
            query.bind(.text(PostgresArray.integers(keyed.map { Int64($0.0.status) })), as: "integer[]")
            query.append(SQLText(","))
            query.bind(.text(PostgresArray.bytes(keyed.map { $0.0.render($0.1) })), as: "bytea[]")
            query.append(SQLText(","))
            query.bind(.text(PostgresArray.integers(keyed.map(\.1.id))), as: "bigint[]")
            query.append(SQLText(","))
            query.bind(.text(PostgresArray.integers(keyed.map(\.1.createdAtMilliseconds))), as: "bigint[]")
            query.append(
                SQLText(
                    """
                    ) AS u(key, claim_id, status, body, order_id, created_at_ms)
                        WHERE k.key = u.key AND k.claim_id = u.claim_id AND k.status = 0
                        RETURNING 1
                    ), counted AS (
                        UPDATE order_counts AS c SET n = c.n + d.n
                        FROM unnest(
                    """))
            query.bind(
                .text(PostgresArray.integers(countKeys.map { Int64($0.split(separator: ",")[0]) ?? 0 })),
                as: "integer[]")
            query.append(SQLText(","))
            query.bind(.text(PostgresArray.booleans(countKeys.map { $0.hasSuffix("true") })), as: "boolean[]")
            query.append(SQLText(","))
            query.bind(.text(PostgresArray.integers(countKeys.map { counts[$0] ?? 0 })), as: "bigint[]")
            query.append(
                SQLText(
                    """
                    ) AS d(type, is_favorite, n)
                        WHERE c.type = d.type AND c.is_favorite = d.is_favorite AND c.status = 'placed' AND c.shard =
                    """))
            query.bind(.integer(Self.randomCountShard()), as: "integer")
            query.append(
                SQLText(
                    """
                    RETURNING 1
                    )
                    SELECT (SELECT count(*) FROM added),
                        cupcake_claims_held((SELECT count(*) FROM answered),
                    """))
            query.bind(.integer(Int64(keyed.count)), as: "bigint")
            query.append(SQLText(")"))
            try connection.query(query)
            return stored
        }
    }

    /// One column of a batch as a PostgreSQL array literal, for `unnest`.
    private static func array(_ column: OrderColumn, _ rows: [StoredOrder]) -> String {
        let values = rows.map(column.value)
        switch column.kind {
        case .integer:
            return PostgresArray.integers(values.map { if case .integer(let value) = $0 { value } else { 0 } })
        case .boolean:
            return PostgresArray.booleans(values.map { if case .boolean(let value) = $0 { value } else { false } })
        case .text:
            return PostgresArray.texts(values.map { if case .text(let value) = $0 { value } else { "" } })
        case .bytes:
            return PostgresArray.bytes(values.map { if case .bytes(let value) = $0 { value } else { nil } })
        }
    }

    /// One of the rows each count is spread over (see ``PostgresSchema/countShards``), so that
    /// concurrent transactions rarely wait for each other's row lock.
    private static func randomCountShard() -> Int64 { Int64.random(in: 0..<Int64(PostgresSchema.countShards)) }

    public func change(id: Int64, _ change: OrderChange) throws(StorageError) -> OrderChangeOutcome {
        try pool.withConnection { connection throws(StorageError) -> OrderChangeOutcome in
            // The row is locked (FOR UPDATE) from its read to COMMIT: a second change of the
            // same order waits, then reads the row as the first left it, so the move is checked
            // against the status as it is and versions never repeat.
            try connection.execute(SQLText("BEGIN"))
            do throws(StorageError) {
                let rows = try connection.query(Self.orderByID + SQLText("FOR UPDATE"), [.integer(id)])
                guard !rows.rows.isEmpty else {
                    try connection.execute(SQLText("ROLLBACK"))
                    return .notFound
                }
                var order = StoredOrder(row: PostgresOrderRow(rows: rows, row: 0))
                let plan = change.plan(status: order.status, favorite: order.isFavorite, version: order.version)
                guard case .apply(let status, let favorite) = plan else {
                    order.history = try Self.history(of: order, connection)
                    try connection.execute(SQLText("ROLLBACK"))
                    switch plan {
                    case .versionMismatch: return .versionMismatch(order)
                    case .refused(let refusal): return .refused(refusal, order)
                    default: return .unchanged(order)
                    }
                }
                let before = order
                order.version += 1
                order.isFavorite = favorite
                let statusMoved = status != order.status
                if statusMoved {
                    order.status = status
                    order.statusChangedAtMilliseconds = change.atMilliseconds
                }
                // One statement: the row, its event (when the status moved) and the counts.
                try connection.query(
                    SQLText(
                        """
                        WITH changed AS (
                            UPDATE orders SET is_favorite = $2, status = $3, status_changed_at_ms = $4, version = $5
                            WHERE id = $1 RETURNING 1
                        ), logged AS (
                            INSERT INTO order_events (order_id, version, status, at_ms, actor, reason)
                            SELECT $1, $5, $3, $4, $6, $7 WHERE $8
                        ), counted AS (
                            UPDATE order_counts SET n = n + CASE WHEN is_favorite = $2 AND status = $3 THEN 1 ELSE -1 END
                            WHERE type = $9 AND shard = $10
                                AND ((is_favorite = $2 AND status = $3) OR (is_favorite = $11 AND status = $12))
                        )
                        SELECT count(*) FROM changed
                        """),
                    [
                        .integer(id), .boolean(order.isFavorite), .text(order.status.wireName),
                        .integer(order.statusChangedAtMilliseconds), .integer(order.version),
                        .text(change.move?.actor.rawValue ?? OrderActor.staff.rawValue),
                        change.move?.reason.map { .text($0) } ?? .null, .boolean(statusMoved),
                        .integer(Int64(order.order.type)), .integer(Self.randomCountShard()),
                        .boolean(before.isFavorite), .text(before.status.wireName),
                    ])
                order.history = try Self.history(of: order, connection)
                // Through `query`, so a COMMIT the synchronous standby did not confirm is an
                // unknown outcome (503), not a change reported as made.
                try connection.query(SQLText("COMMIT"))
                return .changed(order)
            } catch {
                try? connection.execute(SQLText("ROLLBACK"))
                throw error
            }
        }
    }

    /// The order's history, up to its version (see ``StatusHistory``).
    private static func history(of order: StoredOrder, _ connection: PostgresConnection) throws(StorageError)
        -> [StatusChange]
    {
        let rows = try connection.query(
            SQLText("SELECT version, status, at_ms, actor, reason FROM order_events WHERE order_id = $1 ORDER BY id"),
            [.integer(order.id)])
        let events = (0..<rows.rows.count).compactMap { row -> (version: Int64, change: StatusChange)? in
            StatusHistory.change(
                status: rows.text(row, 1), atMilliseconds: rows.integer(row, 2), actor: rows.text(row, 3),
                reason: rows.rows[row][4]
            ).map { (rows.integer(row, 0), $0) }
        }
        return StatusHistory.history(of: order, events: events)
    }

    // MARK: - The event log

    public func events(after position: EventPosition, orderID: Int64?, limit: Int) throws(StorageError)
        -> [OrderEvent]
    {
        try pool.withConnection { connection throws(StorageError) -> [OrderEvent] in
            // Only transactions that have all ended (below the snapshot's xmin): one still running
            // may commit an event with a smaller tx later, which a reader past it would miss.
            // Two statements, so each has its own plan: one order's events from its index
            // (order_id, id), every order's from (tx, id).
            let sql =
                orderID == nil
                ? SQLText(
                    """
                    SELECT id, order_id, version, status, at_ms, actor, reason, tx::text FROM order_events
                    WHERE (tx, id) > ($1::text::xid8, $2::bigint) AND tx < pg_snapshot_xmin(pg_current_snapshot())
                    ORDER BY tx, id LIMIT $3::integer
                    """)
                : SQLText(
                    """
                    SELECT id, order_id, version, status, at_ms, actor, reason, tx::text FROM order_events
                    WHERE order_id = $4::bigint AND (tx, id) > ($1::text::xid8, $2::bigint)
                        AND tx < pg_snapshot_xmin(pg_current_snapshot())
                    ORDER BY tx, id LIMIT $3::integer
                    """)
            var values: [PostgresConnection.Value] = [
                .text(String(position.transaction)), .integer(position.id), .integer(Int64(limit)),
            ]
            if let orderID { values.append(.integer(orderID)) }
            let rows = try connection.query(sql, values)
            return (0..<rows.rows.count).compactMap { row -> OrderEvent? in
                guard
                    let change = StatusHistory.change(
                        status: rows.text(row, 3), atMilliseconds: rows.integer(row, 4), actor: rows.text(row, 5),
                        reason: rows.rows[row][6])
                else { return nil }
                return OrderEvent(
                    position: EventPosition(transaction: rows.integer(row, 7), id: rows.integer(row, 0)),
                    orderID: rows.integer(row, 1), version: rows.integer(row, 2), change: change)
            }
        }
    }

    public func latestEventPosition() throws(StorageError) -> EventPosition {
        try pool.withConnection { connection throws(StorageError) -> EventPosition in
            // Every event of a transaction that ended before the snapshot's xmin is at or before
            // (xmin, 0); later ones come after it.
            let rows = try connection.query(
                SQLText("SELECT pg_snapshot_xmin(pg_current_snapshot())::text"))
            return EventPosition(transaction: max(0, rows.integer(0, 0) - 1), id: Int64.max)
        }
    }

    // MARK: - Reading

    public func order(id: Int64, history: Bool) throws(StorageError) -> StoredOrder? {
        try pool.withConnection { connection throws(StorageError) -> StoredOrder? in
            let rows = try connection.query(Self.orderByID, [.integer(id)])
            guard !rows.rows.isEmpty else { return nil }
            var order = StoredOrder(row: PostgresOrderRow(rows: rows, row: 0))
            if history { order.history = try Self.history(of: order, connection) }
            return order
        }
    }

    private static let orderByID = SQLText("SELECT") + OrderColumn.selectList + SQLText("FROM orders WHERE id = $1")

    public func list(_ query: OrderQuery) throws(StorageError) -> OrderPage {
        let plan = PostgresListPlan(query)
        let values = PostgresListPlan.values(query)
        return try pool.withConnection { connection throws(StorageError) -> OrderPage in
            let total = try self.total(query, plan, values, connection)
            let rows = try connection.query(plan.select, values, types: PostgresListPlan.types)
            let orders = (0..<rows.rows.count).map { StoredOrder(row: PostgresOrderRow(rows: rows, row: $0)) }
            return OrderPage(
                orders: Array(orders.prefix(query.limit)), total: total, hasMore: orders.count > query.limit)
        }
    }

    /// How many orders match: from `order_counts` without a name filter, else counted in the
    /// name index.
    private func total(
        _ query: OrderQuery, _ plan: PostgresListPlan, _ values: [PostgresConnection.Value],
        _ connection: PostgresConnection
    ) throws(StorageError) -> Int {
        guard query.namePrefix != nil else {
            let rows = try connection.query(
                SQLText(
                    """
                    SELECT coalesce(sum(n), 0) FROM order_counts
                    WHERE ($1::integer IS NULL OR type = $1) AND ($2::boolean IS NULL OR is_favorite = $2)
                        AND status = ANY($3::text[])
                    """),
                [
                    query.type.map { .integer(Int64($0)) } ?? .null, query.favorite.map { .boolean($0) } ?? .null,
                    .text(PostgresArray.texts(query.statusList.map(\.wireName))),
                ])
            return Int(rows.integer(0, 0))
        }
        return Int(try connection.query(plan.count, values, types: PostgresListPlan.types).integer(0, 0))
    }

    /// PostgreSQL's plan for a list query, one line per step, for tests.
    public func explain(_ query: OrderQuery) throws(StorageError) -> [String] {
        let plan = PostgresListPlan(query)
        return try pool.withConnection { connection throws(StorageError) -> [String] in
            let rows = try connection.query(
                SQLText("EXPLAIN ") + plan.select, PostgresListPlan.values(query), types: PostgresListPlan.types)
            return (0..<rows.rows.count).map { rows.text($0, 0) }
        }
    }

    public func orderCount() throws(StorageError) -> Int {
        try pool.withConnection { connection throws(StorageError) -> Int in
            Int(
                try connection.query(
                    SQLText("SELECT coalesce(sum(n), 0) FROM order_counts WHERE status <> 'cancelled'")
                ).integer(0, 0))
        }
    }

    // MARK: - Idempotency-Keys

    public func idempotencyRecord(key: String) throws(StorageError) -> IdempotencyRecord? {
        try pool.withConnection { connection throws(StorageError) -> IdempotencyRecord? in
            try Self.record(key, connection)
        }
    }

    private static func record(_ key: String, _ connection: PostgresConnection) throws(StorageError)
        -> IdempotencyRecord?
    {
        let rows = try connection.query(
            SQLText(
                """
                SELECT fingerprint, status, body, order_id, created_at_ms FROM idempotency_keys
                WHERE key = $1 AND status <> 0
                """), [.text(key)])
        guard !rows.rows.isEmpty else { return nil }
        return IdempotencyRecord(
            key: key, fingerprint: rows.bytes(0, 0), status: Int(rows.integer(0, 1)), body: rows.bytes(0, 2),
            orderID: rows.integer(0, 3), createdAtMilliseconds: rows.integer(0, 4))
    }

    public func claimIdempotencyKey(_ key: String, fingerprint: [UInt8], nowMilliseconds: Int64) throws(StorageError)
        -> IdempotencyClaimResult
    {
        let claimID = claimsLock.withLock { () -> String in
            claimCounter += 1
            return "\(instance)-\(claimCounter)"
        }
        return try pool.withConnection { connection throws(StorageError) -> IdempotencyClaimResult in
            let pending = claimsLock.withLock { () -> [(key: String, claimID: String)] in
                defer { unreleased = [] }
                return unreleased
            }
            if !pending.isEmpty {
                do throws(StorageError) {
                    try Self.release(pending, connection)
                } catch {
                    claimsLock.withLock { unreleased += pending }
                    throw error
                }
            }
            // A new key is ours; so is one whose claim expired unfinished (its instance died).
            let claimed = try connection.query(
                SQLText(
                    """
                    INSERT INTO idempotency_keys
                        (key, fingerprint, status, body, order_id, created_at_ms, claim_id, claimed_until_ms)
                    VALUES ($1, $2, 0, '', 0, $3::bigint, $4, $3::bigint + $5::bigint)
                    ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
                        created_at_ms = EXCLUDED.created_at_ms, claim_id = EXCLUDED.claim_id,
                        claimed_until_ms = EXCLUDED.claimed_until_ms
                    WHERE idempotency_keys.status = 0 AND idempotency_keys.claimed_until_ms < $3::bigint
                    RETURNING 1
                    """),
                [
                    .text(key), .bytes(fingerprint), .integer(nowMilliseconds), .text(claimID),
                    .integer(Self.claimSeconds * 1000),
                ])
            if !claimed.rows.isEmpty {
                claimsLock.withLock { claims[key] = claimID }
                return .claimed
            }
            if let record = try Self.record(key, connection) { return .used(record) }
            return .inFlight
        }
    }

    public func releaseIdempotencyKey(_ key: String, committed: Bool) {
        guard let claimID = claimsLock.withLock({ claims.removeValue(forKey: key) }), !committed else { return }
        // Not stored: let a retry claim it at once. When the database cannot be reached (the
        // usual reason nothing was stored), the release waits for the next claim, so a client
        // retrying once the database is back is not told 409 until the claim expires.
        do {
            try pool.withConnection { connection throws(StorageError) in
                try Self.release([(key, claimID)], connection)
            }
        } catch {
            claimsLock.withLock {
                if unreleased.count < 10_000 { unreleased.append((key, claimID)) }
            }
        }
    }

    /// Deletes unfinished claims (only while still unfinished and still these claims).
    private static func release(_ claims: [(key: String, claimID: String)], _ connection: PostgresConnection)
        throws(StorageError)
    {
        try connection.query(
            SQLText(
                """
                DELETE FROM idempotency_keys AS k USING unnest($1::text[], $2::text[]) AS r(key, claim_id)
                WHERE k.key = r.key AND k.claim_id = r.claim_id AND k.status = 0
                """),
            [.text(PostgresArray.texts(claims.map(\.key))), .text(PostgresArray.texts(claims.map(\.claimID)))])
    }

    public func purgeIdempotencyKeys(recordedBefore milliseconds: Int64) throws(StorageError) -> Int {
        try pool.withConnection { connection throws(StorageError) -> Int in
            try connection.query(
                SQLText("DELETE FROM idempotency_keys WHERE created_at_ms < $1 AND claimed_until_ms < $1"),
                [.integer(milliseconds)]
            ).affected
        }
    }

    /// Loads many orders fast, for benchmarks: batches of `batchSize`, one transaction each.
    public func bulkInsert(count: Int, batchSize: Int, make: (Int) -> NewOrder, progress: (Int) -> Void)
        throws(StorageError)
    {
        try insertInBatches(count: count, batchSize: batchSize, make: make, progress: progress)
    }

    public func close() {
        pool.close()
    }
}

/// A row of a PostgreSQL answer selected with ``OrderColumn/selectList``.
struct PostgresOrderRow: OrderRow {
    let rows: PostgresConnection.Rows
    let row: Int

    func integer(_ column: OrderColumn) -> Int64 { rows.integer(row, Int(column.position)) }
    func boolean(_ column: OrderColumn) -> Bool { rows.boolean(row, Int(column.position)) }
    func text(_ column: OrderColumn) -> String { rows.text(row, Int(column.position)) }
    func bytes(_ column: OrderColumn) -> [UInt8] { rows.bytes(row, Int(column.position)) }
}
