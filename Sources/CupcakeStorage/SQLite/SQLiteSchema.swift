/// The versioned schema. Each migration moves `PRAGMA user_version` up by one, inside one
/// transaction; a database newer than this list is refused rather than misread.
enum SQLiteSchema {
    static let migrations: [StaticString] = [
        // 1: orders and idempotency keys.
        """
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
        """
    ]
}
