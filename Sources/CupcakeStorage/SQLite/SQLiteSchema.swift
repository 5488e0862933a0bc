/// The versioned schema. Each migration moves `PRAGMA user_version` up by one, inside one
/// transaction; a database newer than this list is refused rather than misread.
enum SQLiteSchema {
    /// One step: constant SQL, then (optionally) work that needs Swift, in the same transaction.
    struct Migration: Sendable {
        var sql: StaticString
        var backfill: (@Sendable (SQLiteConnection) throws(StorageError) -> Void)?
    }

    static let migrations: [Migration] = [
        // 1: orders and idempotency keys.
        Migration(
            sql: """
                CREATE TABLE orders (
                    id INTEGER PRIMARY KEY,
                    type INTEGER NOT NULL,
                    quantity INTEGER NOT NULL,
                    special_request_enabled INTEGER NOT NULL,
                    extra_frosting INTEGER NOT NULL,
                    add_sprinkles INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    street_address TEXT NOT NULL,
                    city TEXT NOT NULL,
                    zip TEXT NOT NULL,
                    cost_cents INTEGER NOT NULL,
                    created_at_ms INTEGER NOT NULL,
                    is_favorite INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE idempotency_keys (
                    key TEXT PRIMARY KEY,
                    fingerprint BLOB NOT NULL,
                    status INTEGER NOT NULL,
                    body BLOB NOT NULL,
                    order_id INTEGER NOT NULL,
                    created_at_ms INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at_ms);
                PRAGMA user_version = 1;
                """),
        // 2: order history. A lower-cased name key for case-insensitive prefix ranges, one index
        // per filter and sort key (with id as the stable tie-break) and a partial index of
        // favourites. Orders are created with non-decreasing created_at_ms in id order (the
        // store keeps it so), so the time sorts walk the primary key and need no index.
        Migration(
            sql: """
                ALTER TABLE orders ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
                CREATE INDEX orders_by_name ON orders (name_key, id);
                CREATE INDEX orders_by_cost ON orders (cost_cents, id);
                CREATE INDEX orders_by_type ON orders (type, id);
                CREATE INDEX orders_favorites ON orders (id) WHERE is_favorite = 1;
                PRAGMA user_version = 2;
                """,
            backfill: { connection throws(StorageError) in
                // Lower-casing is Swift's (full Unicode), so it is done here, not by SQLite's lower().
                var rows: [(Int64, String)] = []
                try connection.withStatement("SELECT id, name FROM orders") { query throws(StorageError) in
                    while try query.step() { rows.append((query.int64(0), query.string(1))) }
                }
                for (id, name) in rows {
                    try connection.withStatement("UPDATE orders SET name_key = ? WHERE id = ?") {
                        update throws(StorageError) in
                        update.bind(1, OrderQuery.nameKey(name))
                        update.bind(2, id)
                        try update.step()
                    }
                }
            }),
        // 3: the highest order id ever handed out, kept when the newest order is cancelled, so
        // that its id is not given to the next order after a restart either.
        Migration(
            sql: """
                CREATE TABLE order_id_floor (
                    single INTEGER PRIMARY KEY CHECK (single = 1),
                    last_id INTEGER NOT NULL
                );
                PRAGMA user_version = 3;
                """),
        // 4: the SHA-256 of each order's receipt token (the token itself is never stored), which
        // lets the app key reach that one order. Older orders have none: only staff reach them.
        Migration(
            sql: """
                ALTER TABLE orders ADD COLUMN receipt_hash BLOB;
                PRAGMA user_version = 4;
                """),
        // 5: each order's status, since when, and a version that moves with every change; and
        // the log of status changes, one row per change, written in the change's transaction.
        // Orders from before are placed, at version 1, since they were created (0 reads as
        // that); cancelling used to delete an order, so none is found cancelled. Event ids are
        // never reused (rows are never deleted), so they are the log's order. The name index
        // carries the status, so a name filter is still counted in the index alone. The status
        // index leaves placed orders out: a new order costs it nothing (placed orders are the
        // newest, found walking by time), and it holds the few in the kitchen and the rest.
        Migration(
            sql: """
                ALTER TABLE orders ADD COLUMN status TEXT NOT NULL DEFAULT 'placed';
                ALTER TABLE orders ADD COLUMN status_changed_at_ms INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE orders ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
                CREATE INDEX orders_by_status ON orders (status, id) WHERE status <> 'placed';
                DROP INDEX orders_by_name;
                CREATE INDEX orders_by_name ON orders (name_key, id, status);
                CREATE TABLE order_events (
                    id INTEGER PRIMARY KEY,
                    order_id INTEGER NOT NULL,
                    version INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    at_ms INTEGER NOT NULL,
                    actor TEXT NOT NULL,
                    reason TEXT
                );
                CREATE INDEX order_events_by_order ON order_events (order_id, id);
                PRAGMA user_version = 5;
                """),
        // 6: webhooks. The endpoints; per endpoint and event a delivery (the body it sends on
        // every attempt, where it stands, its lease); each attempt; and how far the outbox has
        // read the event log. The partial indexes hold only pending deliveries: the due ones by
        // time, and each endpoint's by order, for "the earliest undelivered of its order".
        Migration(
            sql: """
                CREATE TABLE webhook_endpoints (
                    id INTEGER PRIMARY KEY,
                    url TEXT NOT NULL,
                    event_types TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    previous_secret TEXT,
                    previous_secret_until_ms INTEGER,
                    enabled INTEGER NOT NULL DEFAULT 1,
                    disabled_reason TEXT,
                    failing_since_ms INTEGER,
                    created_at_ms INTEGER NOT NULL
                );
                CREATE TABLE webhook_deliveries (
                    id INTEGER PRIMARY KEY,
                    endpoint_id INTEGER NOT NULL,
                    event_id INTEGER NOT NULL,
                    order_id INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    body TEXT NOT NULL,
                    state TEXT NOT NULL DEFAULT 'pending',
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_ms INTEGER NOT NULL,
                    lease_owner TEXT,
                    lease_until_ms INTEGER NOT NULL DEFAULT 0,
                    created_at_ms INTEGER NOT NULL,
                    UNIQUE (endpoint_id, event_id)
                );
                CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_ms, id) WHERE state = 'pending';
                CREATE INDEX webhook_deliveries_by_order ON webhook_deliveries (endpoint_id, order_id, id)
                    WHERE state = 'pending';
                CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);
                CREATE TABLE webhook_attempts (
                    id INTEGER PRIMARY KEY,
                    delivery_id INTEGER NOT NULL,
                    endpoint_id INTEGER NOT NULL,
                    event_id INTEGER NOT NULL,
                    at_ms INTEGER NOT NULL,
                    status INTEGER NOT NULL,
                    duration_ms INTEGER NOT NULL,
                    error TEXT
                );
                CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, id);
                CREATE TABLE webhook_outbox (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    position TEXT NOT NULL
                );
                PRAGMA user_version = 6;
                """),
        // 7: each endpoint reads the log itself: its position (every event up to it delivered
        // or made a delivery) and who reads it, until when. Deliveries are made only of what is
        // still owed, so the one outbox cursor goes; endpoints continue from where it stood.
        Migration(
            sql: """
                ALTER TABLE webhook_endpoints ADD COLUMN position TEXT NOT NULL DEFAULT '0';
                ALTER TABLE webhook_endpoints ADD COLUMN stream_owner TEXT;
                ALTER TABLE webhook_endpoints ADD COLUMN stream_until_ms INTEGER NOT NULL DEFAULT 0;
                UPDATE webhook_endpoints SET position = coalesce(
                    (SELECT position FROM webhook_outbox WHERE id = 1),
                    (SELECT CAST(coalesce(max(id), 0) AS TEXT) FROM order_events));
                DROP TABLE webhook_outbox;
                PRAGMA user_version = 7;
                """),
    ]
}
