/// The webhooks' state in PostgreSQL (see ``WebhookStore``), shared by every instance over the
/// database: one instance at a time reads an endpoint's log (a lease on the endpoint's row, and
/// its position moved only by the holder), and deliveries are claimed with `FOR UPDATE SKIP
/// LOCKED` and a lease, so two instances never send one event at once and a killed instance's
/// share passes to the others when its leases end.
extension PostgresOrderStore: WebhookStore {
    private static let endpointColumns = SQLText(
        """
        SELECT id, url, event_types, secret, previous_secret, previous_secret_until_ms, enabled, disabled_reason,
            failing_since_ms, created_at_ms, position FROM webhook_endpoints
        """)

    private static func endpoints(_ rows: PostgresConnection.Rows) -> [WebhookEndpoint] {
        (0..<rows.rows.count).map { row in
            WebhookEndpoint(
                id: rows.integer(row, 0), url: rows.text(row, 1),
                eventTypes: WebhookEndpoint.eventTypes(stored: rows.text(row, 2)), secret: rows.text(row, 3),
                previousSecret: rows.rows[row][4],
                previousSecretUntilMilliseconds: rows.rows[row][5].flatMap { Int64($0) },
                enabled: rows.boolean(row, 6), disabledReason: rows.rows[row][7],
                failingSinceMilliseconds: rows.rows[row][8].flatMap { Int64($0) },
                createdAtMilliseconds: rows.integer(row, 9),
                position: EventPosition(text: rows.text(row, 10)) ?? .start)
        }
    }

    /// Runs `body` in a transaction on one connection.
    private func transaction<T>(_ body: (PostgresConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        try pool.withConnection { connection throws(StorageError) -> T in
            try connection.execute(SQLText("BEGIN"))
            do throws(StorageError) {
                let result = try body(connection)
                try connection.query(SQLText("COMMIT"))
                return result
            } catch {
                try? connection.execute(SQLText("ROLLBACK"))
                throw error
            }
        }
    }

    public func createWebhookEndpoint(url: String, eventTypes: [String], secret: String, nowMilliseconds: Int64)
        throws(StorageError) -> WebhookEndpoint
    {
        var endpoint = WebhookEndpoint(
            id: 0, url: url, eventTypes: eventTypes, secret: secret, createdAtMilliseconds: nowMilliseconds,
            position: try latestEventPosition())
        let rows = try pool.withConnection { connection throws(StorageError) in
            try connection.query(
                SQLText(
                    """
                    INSERT INTO webhook_endpoints (url, event_types, secret, created_at_ms, position)
                    VALUES ($1, $2, $3, $4, $5) RETURNING id
                    """),
                [
                    .text(url), .text(endpoint.storedEventTypes), .text(secret), .integer(nowMilliseconds),
                    .text(endpoint.position.description),
                ])
        }
        endpoint.id = rows.integer(0, 0)
        return endpoint
    }

    public func webhookEndpoints() throws(StorageError) -> [WebhookEndpoint] {
        try pool.withConnection { connection throws(StorageError) in
            Self.endpoints(try connection.query(Self.endpointColumns + SQLText("ORDER BY id")))
        }
    }

    public func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) throws(StorageError)
        -> WebhookEndpoint?
    {
        // Enabled again: it reads on from the log's end (what happened meanwhile is skipped).
        let end = change == .enabled(true, reason: nil) ? try latestEventPosition() : nil
        return try transaction { connection throws(StorageError) -> WebhookEndpoint? in
            if let end {
                try connection.query(
                    SQLText("UPDATE webhook_endpoints SET position = $2 WHERE id = $1 AND NOT enabled"),
                    [.integer(id), .text(end.description)])
            }
            try Self.apply(change, to: id, connection)
            return Self.endpoints(try connection.query(Self.endpointColumns + SQLText("WHERE id = $1"), [.integer(id)]))
                .first
        }
    }

    private static func apply(_ change: WebhookEndpointChange, to id: Int64, _ connection: PostgresConnection)
        throws(StorageError)
    {
        switch change {
        case .enabled(true, _):
            try connection.query(
                SQLText(
                    "UPDATE webhook_endpoints SET enabled = true, disabled_reason = NULL, failing_since_ms = NULL WHERE id = $1"
                ), [.integer(id)])
        case .enabled(false, let reason):
            try connection.query(
                SQLText("UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2 WHERE id = $1"),
                [.integer(id), .text(reason ?? "disabled")])
        case .rotated(let secret, let until):
            try connection.query(
                SQLText(
                    """
                    UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until_ms = $2, secret = $3
                    WHERE id = $1
                    """), [.integer(id), .integer(until), .text(secret)])
        case .failing(let since?):
            try connection.query(
                SQLText("UPDATE webhook_endpoints SET failing_since_ms = coalesce(failing_since_ms, $2) WHERE id = $1"),
                [.integer(id), .integer(since)])
        case .failing(nil):
            try connection.query(
                SQLText(
                    "UPDATE webhook_endpoints SET failing_since_ms = NULL WHERE id = $1 AND failing_since_ms IS NOT NULL"
                ),
                [.integer(id)])
        }
    }

    public func deleteWebhookEndpoint(id: Int64) throws(StorageError) -> Bool {
        try transaction { connection throws(StorageError) -> Bool in
            try connection.query(SQLText("DELETE FROM webhook_attempts WHERE endpoint_id = $1"), [.integer(id)])
            try connection.query(SQLText("DELETE FROM webhook_deliveries WHERE endpoint_id = $1"), [.integer(id)])
            return try connection.query(SQLText("DELETE FROM webhook_endpoints WHERE id = $1"), [.integer(id)])
                .affected > 0
        }
    }

    public func webhookEvent(id: Int64) throws(StorageError) -> OrderEvent? {
        let rows = try pool.withConnection { connection throws(StorageError) in
            try connection.query(
                SQLText(
                    "SELECT id, order_id, version, status, at_ms, actor, reason, tx::text FROM order_events WHERE id = $1"
                ), [.integer(id)])
        }
        guard !rows.rows.isEmpty,
            let change = StatusHistory.change(
                status: rows.text(0, 3), atMilliseconds: rows.integer(0, 4), actor: rows.text(0, 5),
                reason: rows.rows[0][6])
        else { return nil }
        return OrderEvent(
            position: EventPosition(transaction: rows.integer(0, 7), id: rows.integer(0, 0)),
            orderID: rows.integer(0, 1), version: rows.integer(0, 2), change: change)
    }

    public func leaseWebhookStream(
        endpointID: Int64, owner: String, nowMilliseconds: Int64, untilMilliseconds: Int64
    ) throws(StorageError) -> EventPosition? {
        let rows = try pool.withConnection { connection throws(StorageError) in
            try connection.query(
                SQLText(
                    """
                    UPDATE webhook_endpoints SET stream_owner = $2, stream_until_ms = $4
                    WHERE id = $1 AND enabled AND (stream_owner IS NULL OR stream_owner = $2 OR stream_until_ms <= $3)
                    RETURNING position
                    """),
                [.integer(endpointID), .text(owner), .integer(nowMilliseconds), .integer(untilMilliseconds)])
        }
        return rows.rows.isEmpty ? nil : EventPosition(text: rows.text(0, 0))
    }

    public func webhookOrdersWaiting(endpointID: Int64, orderIDs: [Int64]) throws(StorageError) -> Set<Int64> {
        guard !orderIDs.isEmpty else { return [] }
        let rows = try pool.withConnection { connection throws(StorageError) in
            try connection.query(
                SQLText(
                    """
                    SELECT DISTINCT order_id FROM webhook_deliveries
                    WHERE endpoint_id = $1 AND state = 'pending' AND order_id = ANY($2::bigint[])
                    """), [.integer(endpointID), .text(PostgresArray.integers(orderIDs))])
        }
        return Set((0..<rows.rows.count).map { rows.integer($0, 0) })
    }

    public func recordWebhookBatch(_ batch: WebhookBatch) throws(StorageError) -> Bool {
        try transaction { connection throws(StorageError) -> Bool in
            // Only the holder of the right to read moves the position, and only from where it read.
            let moved =
                try connection.query(
                    SQLText(
                        "UPDATE webhook_endpoints SET position = $1 WHERE id = $2 AND position = $3 AND stream_owner = $4"
                    ),
                    [
                        .text(batch.to.description), .integer(batch.endpointID), .text(batch.from.description),
                        .text(batch.owner),
                    ]
                ).affected > 0
            guard moved else { return false }
            try Self.insert(batch.attempts, connection)
            for delivery in batch.deliveries {
                try connection.query(
                    SQLText(
                        """
                        INSERT INTO webhook_deliveries (endpoint_id, event_id, order_id, type, body, attempts,
                            next_attempt_ms, lease_owner, lease_until_ms, created_at_ms)
                        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (endpoint_id, event_id) DO NOTHING
                        """),
                    [
                        .integer(delivery.endpointID), .integer(delivery.eventID), .integer(delivery.orderID),
                        .text(delivery.type), .text(delivery.body), .integer(Int64(delivery.attempts)),
                        .integer(delivery.nextAttemptMilliseconds), delivery.lease.map { .text($0.owner) } ?? .null,
                        .integer(delivery.lease?.untilMilliseconds ?? 0), .integer(batch.nowMilliseconds),
                    ])
            }
            if let change = batch.endpointChange { try Self.apply(change, to: batch.endpointID, connection) }
            return true
        }
    }

    /// Adds attempts in one statement, in their order, those of endpoints still there.
    private static func insert(_ attempts: [WebhookAttempt], _ connection: PostgresConnection) throws(StorageError) {
        guard !attempts.isEmpty else { return }
        var insert = PostgresQuery(
            SQLText(
                """
                INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, at_ms, status, duration_ms, error)
                SELECT d, e, v, t, s, ms, nullif(err, '') FROM unnest(
                """))
        insert.bind(.text(PostgresArray.integers(attempts.map(\.deliveryID))), as: "bigint[]")
        insert.append(SQLText(","))
        insert.bind(.text(PostgresArray.integers(attempts.map(\.endpointID))), as: "bigint[]")
        insert.append(SQLText(","))
        insert.bind(.text(PostgresArray.integers(attempts.map(\.eventID))), as: "bigint[]")
        insert.append(SQLText(","))
        insert.bind(.text(PostgresArray.integers(attempts.map(\.atMilliseconds))), as: "bigint[]")
        insert.append(SQLText(","))
        insert.bind(.text(PostgresArray.integers(attempts.map { Int64($0.status) })), as: "integer[]")
        insert.append(SQLText(","))
        insert.bind(.text(PostgresArray.integers(attempts.map(\.durationMilliseconds))), as: "bigint[]")
        insert.append(SQLText(","))
        insert.bind(.text(PostgresArray.texts(attempts.map { $0.error ?? "" })), as: "text[]")
        insert.append(
            SQLText(
                """
                ) WITH ORDINALITY AS u(d, e, v, t, s, ms, err, n)
                WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = u.e) ORDER BY n
                """))
        try connection.query(insert)
    }

    public func claimWebhookDeliveries(
        owner: String, nowMilliseconds: Int64, leaseUntilMilliseconds: Int64, limit: Int
    ) throws(StorageError) -> [WebhookDelivery] {
        let rows = try pool.withConnection { connection throws(StorageError) in
            // One statement: rows another instance is claiming now are skipped, not waited for;
            // one it claimed a moment ago is no longer due once its lease is seen (the row is
            // read again after its lock).
            try connection.query(
                SQLText(
                    """
                    UPDATE webhook_deliveries SET lease_owner = $1, lease_until_ms = $2
                    WHERE id IN (
                        SELECT d.id FROM webhook_deliveries d
                        JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
                        WHERE d.state = 'pending' AND d.next_attempt_ms <= $3 AND d.lease_until_ms <= $3
                            AND NOT EXISTS (
                                SELECT 1 FROM webhook_deliveries p
                                WHERE p.endpoint_id = d.endpoint_id AND p.order_id = d.order_id
                                    AND p.state = 'pending' AND p.id < d.id)
                        ORDER BY d.next_attempt_ms, d.id LIMIT $4
                        FOR UPDATE OF d SKIP LOCKED)
                        AND state = 'pending' AND lease_until_ms <= $3
                    RETURNING id, endpoint_id, event_id, order_id, type, body, attempts, next_attempt_ms
                    """),
                [.text(owner), .integer(leaseUntilMilliseconds), .integer(nowMilliseconds), .integer(Int64(limit))])
        }
        return (0..<rows.rows.count).map { row in
            WebhookDelivery(
                id: rows.integer(row, 0), endpointID: rows.integer(row, 1), eventID: rows.integer(row, 2),
                orderID: rows.integer(row, 3), type: rows.text(row, 4), body: rows.text(row, 5), state: .pending,
                attempts: Int(rows.integer(row, 6)), nextAttemptMilliseconds: rows.integer(row, 7))
        }.sorted { ($0.nextAttemptMilliseconds, $0.id) < ($1.nextAttemptMilliseconds, $1.id) }
    }

    public func recordWebhookResults(_ results: [WebhookResult]) throws(StorageError) {
        guard !results.isEmpty else { return }
        try transaction { connection throws(StorageError) in
            try Self.insert(results.map(\.attempt), connection)
            for result in results {
                let attempt = result.attempt
                let (state, next): (WebhookDelivery.State, Int64) =
                    switch result.outcome {
                    case .delivered: (.delivered, 0)
                    case .retry(let at): (.pending, at)
                    case .gaveUp: (.failed, 0)
                    }
                try connection.query(
                    SQLText(
                        """
                        UPDATE webhook_deliveries SET state = $1::text, attempts = attempts + 1,
                            next_attempt_ms = CASE WHEN $1 = 'pending' THEN $2 ELSE next_attempt_ms END,
                            lease_owner = NULL, lease_until_ms = 0
                        WHERE endpoint_id = $3 AND event_id = $4
                        """),
                    [.text(state.rawValue), .integer(next), .integer(attempt.endpointID), .integer(attempt.eventID)])
                if let change = result.endpointChange { try Self.apply(change, to: attempt.endpointID, connection) }
            }
        }
    }

    public func webhookAttempts(endpointID: Int64, limit: Int) throws(StorageError) -> [WebhookAttempt] {
        let rows = try pool.withConnection { connection throws(StorageError) in
            try connection.query(
                SQLText(
                    """
                    SELECT delivery_id, endpoint_id, event_id, at_ms, status, duration_ms, error FROM webhook_attempts
                    WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2
                    """), [.integer(endpointID), .integer(Int64(limit))])
        }
        return (0..<rows.rows.count).map { row in
            WebhookAttempt(
                deliveryID: rows.integer(row, 0), endpointID: rows.integer(row, 1), eventID: rows.integer(row, 2),
                atMilliseconds: rows.integer(row, 3), status: Int(rows.integer(row, 4)),
                durationMilliseconds: rows.integer(row, 5), error: rows.rows[row][6])
        }
    }

    public func pruneWebhookHistory(beforeMilliseconds: Int64, limit: Int) throws(StorageError) -> Int {
        try transaction { connection throws(StorageError) -> Int in
            var count = 0
            // Each looks at the `limit` oldest rows by id (ids grow with time). Instances pruning
            // at once delete the same rows: the second finds them gone.
            let statements: [StaticString] = [
                """
                DELETE FROM webhook_attempts
                WHERE id IN (SELECT id FROM webhook_attempts ORDER BY id LIMIT $2) AND at_ms < $1
                """,
                """
                DELETE FROM webhook_deliveries
                WHERE id IN (SELECT id FROM webhook_deliveries WHERE state <> 'pending' ORDER BY id LIMIT $2)
                    AND created_at_ms < $1
                """,
            ]
            for sql in statements {
                count += try connection.query(
                    SQLText(sql), [.integer(beforeMilliseconds), .integer(Int64(limit))]
                ).affected
            }
            return count
        }
    }

    public func redeliverWebhookEvent(
        eventID: Int64, orderID: Int64, type: String, endpointIDs: [Int64], nowMilliseconds: Int64
    ) throws(StorageError) -> Int {
        guard !endpointIDs.isEmpty else { return 0 }
        return try transaction { connection throws(StorageError) -> Int in
            var count = 0
            for endpointID in endpointIDs {
                count += try connection.query(
                    SQLText(
                        """
                        INSERT INTO webhook_deliveries (endpoint_id, event_id, order_id, type, body, next_attempt_ms,
                            created_at_ms)
                        SELECT $1, $2, $3, $4, '', $5, $5 WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1)
                        ON CONFLICT (endpoint_id, event_id) DO UPDATE SET state = 'pending', attempts = 0,
                            next_attempt_ms = excluded.next_attempt_ms
                        """),
                    [
                        .integer(endpointID), .integer(eventID), .integer(orderID), .text(type),
                        .integer(nowMilliseconds),
                    ]
                ).affected
            }
            return count
        }
    }

    public func webhookBacklog() throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) {
        let endpoints = try webhookEndpoints().filter(\.enabled)
        return try pool.withConnection {
            connection throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) in
            // The deliveries owed, and for each enabled endpoint the events after its position.
            let rows = try connection.query(
                SQLText("SELECT count(*), min(created_at_ms) FROM webhook_deliveries WHERE state = 'pending'"))
            var pending = Int(rows.integer(0, 0))
            var oldest = rows.rows[0][1].flatMap { Int64($0) }
            for endpoint in endpoints {
                let unread = try connection.query(
                    SQLText(
                        """
                        SELECT count(*), min(at_ms) FROM order_events
                        WHERE (tx, id) > ($1::text::xid8, $2::bigint) AND tx < pg_snapshot_xmin(pg_current_snapshot())
                        """), [.text(String(endpoint.position.transaction)), .integer(endpoint.position.id)])
                pending += Int(unread.integer(0, 0))
                if let time = unread.rows[0][1].flatMap({ Int64($0) }) { oldest = min(oldest ?? time, time) }
            }
            return (pending, oldest)
        }
    }
}
