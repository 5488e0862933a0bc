/// The webhooks' state in PostgreSQL (see ``WebhookStore``), shared by every instance over the
/// database: the outbox cursor is moved under its row's lock, and deliveries are claimed with
/// `FOR UPDATE SKIP LOCKED` and a lease, so two instances never send one delivery at once and a
/// killed instance's claims pass to the others when their leases end.
extension PostgresOrderStore: WebhookStore {
    private static let endpointColumns = SQLText(
        """
        SELECT id, url, event_types, secret, previous_secret, previous_secret_until_ms, enabled, disabled_reason,
            failing_since_ms, created_at_ms FROM webhook_endpoints
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
                createdAtMilliseconds: rows.integer(row, 9))
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
            id: 0, url: url, eventTypes: eventTypes, secret: secret, createdAtMilliseconds: nowMilliseconds)
        let rows = try pool.withConnection { connection throws(StorageError) in
            try connection.query(
                SQLText(
                    "INSERT INTO webhook_endpoints (url, event_types, secret, created_at_ms) VALUES ($1, $2, $3, $4) RETURNING id"
                ), [.text(url), .text(endpoint.storedEventTypes), .text(secret), .integer(nowMilliseconds)])
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
        try transaction { connection throws(StorageError) -> WebhookEndpoint? in
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

    public func webhookCursor() throws(StorageError) -> EventPosition? {
        try pool.withConnection { connection throws(StorageError) -> EventPosition? in
            let rows = try connection.query(SQLText("SELECT position FROM webhook_outbox WHERE id = 1"))
            return rows.rows.isEmpty ? nil : EventPosition(text: rows.text(0, 0))
        }
    }

    public func enqueueWebhookDeliveries(
        _ deliveries: [NewWebhookDelivery], from: EventPosition?, to: EventPosition, nowMilliseconds: Int64
    ) throws(StorageError) -> Bool {
        try transaction { connection throws(StorageError) -> Bool in
            // The row's lock makes instances take turns; the one that finds the cursor moved
            // adds nothing.
            let rows = try connection.query(SQLText("SELECT position FROM webhook_outbox WHERE id = 1 FOR UPDATE"))
            guard !rows.rows.isEmpty, EventPosition(text: rows.text(0, 0)) == from else { return false }
            if !deliveries.isEmpty {
                var insert = PostgresQuery(
                    SQLText(
                        """
                        INSERT INTO webhook_deliveries (endpoint_id, event_id, order_id, type, body, next_attempt_ms,
                            created_at_ms)
                        SELECT e, v, o, t, b, n, n FROM unnest(
                        """))
                insert.bind(.text(PostgresArray.integers(deliveries.map(\.endpointID))), as: "bigint[]")
                insert.append(SQLText(","))
                insert.bind(.text(PostgresArray.integers(deliveries.map(\.eventID))), as: "bigint[]")
                insert.append(SQLText(","))
                insert.bind(.text(PostgresArray.integers(deliveries.map(\.orderID))), as: "bigint[]")
                insert.append(SQLText(","))
                insert.bind(.text(PostgresArray.texts(deliveries.map(\.type))), as: "text[]")
                insert.append(SQLText(","))
                insert.bind(.text(PostgresArray.texts(deliveries.map(\.body))), as: "text[]")
                insert.append(SQLText(") AS d(e, v, o, t, b), (SELECT"))
                insert.bind(.integer(nowMilliseconds), as: "bigint")
                insert.append(SQLText("AS n) AS clock ON CONFLICT (endpoint_id, event_id) DO NOTHING"))
                try connection.query(insert)
            }
            try connection.query(
                SQLText("UPDATE webhook_outbox SET position = $1 WHERE id = 1"), [.text(to.description)])
            return true
        }
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
            for result in results {
                let attempt = result.attempt
                try connection.query(
                    SQLText(
                        """
                        INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, at_ms, status, duration_ms, error)
                        SELECT $1::bigint, $2::bigint, $3::bigint, $4::bigint, $5::integer, $6::bigint, $7::text
                        WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $2::bigint)
                        """),
                    [
                        .integer(attempt.deliveryID), .integer(attempt.endpointID), .integer(attempt.eventID),
                        .integer(attempt.atMilliseconds), .integer(Int64(attempt.status)),
                        .integer(attempt.durationMilliseconds), attempt.error.map { .text($0) } ?? .null,
                    ])
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
                        WHERE id = $3
                        """), [.text(state.rawValue), .integer(next), .integer(attempt.deliveryID)])
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

    public func redeliverWebhookEvent(eventID: Int64, nowMilliseconds: Int64) throws(StorageError) -> Int {
        try pool.withConnection { connection throws(StorageError) -> Int in
            try connection.query(
                SQLText(
                    "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = $2 WHERE event_id = $1"
                ), [.integer(eventID), .integer(nowMilliseconds)]
            ).affected
        }
    }

    public func webhookBacklog() throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) {
        try pool.withConnection { connection throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) in
            let rows = try connection.query(
                SQLText("SELECT count(*), min(created_at_ms) FROM webhook_deliveries WHERE state = 'pending'"))
            return (Int(rows.integer(0, 0)), rows.rows[0][1].flatMap { Int64($0) })
        }
    }
}
