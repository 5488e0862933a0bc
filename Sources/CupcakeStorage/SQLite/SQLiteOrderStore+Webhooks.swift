/// The webhooks' state in SQLite (see ``WebhookStore``): one process writes, so the leases only
/// keep its own delivery threads apart, and an endpoint's position is an event id.
extension SQLiteOrderStore: WebhookStore {
    static let endpointColumns: StaticString = """
        SELECT id, url, event_types, secret, previous_secret, previous_secret_until_ms, enabled, disabled_reason,
            failing_since_ms, created_at_ms, position FROM webhook_endpoints
        """

    public func createWebhookEndpoint(url: String, eventTypes: [String], secret: String, nowMilliseconds: Int64)
        throws(StorageError) -> WebhookEndpoint
    {
        try withWriter { connection throws(StorageError) -> WebhookEndpoint in
            try connection.transaction { () throws(StorageError) -> WebhookEndpoint in
                try connection.withStatement(
                    """
                    INSERT INTO webhook_endpoints (url, event_types, secret, created_at_ms, position)
                    VALUES (?, ?, ?, ?, ?) RETURNING id
                    """
                ) { insert throws(StorageError) -> WebhookEndpoint in
                    let endpoint = WebhookEndpoint(
                        id: 0, url: url, eventTypes: eventTypes, secret: secret, createdAtMilliseconds: nowMilliseconds,
                        position: try Self.logEnd(connection))
                    insert.bind(1, url)
                    insert.bind(2, endpoint.storedEventTypes)
                    insert.bind(3, secret)
                    insert.bind(4, nowMilliseconds)
                    insert.bind(5, endpoint.position.description)
                    guard try insert.step() else { throw StorageError(.failed, "no id for the new endpoint") }
                    var made = endpoint
                    made.id = insert.int64(0)
                    return made
                }
            }
        }
    }

    /// The position of the log's last event.
    private static func logEnd(_ connection: SQLiteConnection) throws(StorageError) -> EventPosition {
        EventPosition(id: Int64(try connection.integerPragma("SELECT coalesce(max(id), 0) FROM order_events")))
    }

    public func webhookEndpoints() throws(StorageError) -> [WebhookEndpoint] {
        try withReader { connection throws(StorageError) in try Self.endpoints(where: nil, connection) }
    }

    private static func endpoints(where id: Int64?, _ connection: SQLiteConnection) throws(StorageError)
        -> [WebhookEndpoint]
    {
        let sql = SQLText(endpointColumns) ++ SQLText(id == nil ? " ORDER BY id" : " WHERE id = ?")
        return try connection.withStatement(sql) { query throws(StorageError) -> [WebhookEndpoint] in
            if let id { query.bind(1, id) }
            var endpoints: [WebhookEndpoint] = []
            while try query.step() {
                endpoints.append(
                    WebhookEndpoint(
                        id: query.int64(0), url: query.string(1),
                        eventTypes: WebhookEndpoint.eventTypes(stored: query.string(2)), secret: query.string(3),
                        previousSecret: query.optionalString(4),
                        previousSecretUntilMilliseconds: query.optionalString(5).flatMap { Int64($0) },
                        enabled: query.bool(6), disabledReason: query.optionalString(7),
                        failingSinceMilliseconds: query.optionalString(8).flatMap { Int64($0) },
                        createdAtMilliseconds: query.int64(9),
                        position: EventPosition(text: query.string(10)) ?? .start))
            }
            return endpoints
        }
    }

    public func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) throws(StorageError)
        -> WebhookEndpoint?
    {
        try withWriter { connection throws(StorageError) -> WebhookEndpoint? in
            try connection.transaction { () throws(StorageError) -> WebhookEndpoint? in
                try Self.apply(change, to: id, connection)
                return try Self.endpoints(where: id, connection).first
            }
        }
    }

    private static func apply(_ change: WebhookEndpointChange, to id: Int64, _ connection: SQLiteConnection)
        throws(StorageError)
    {
        switch change {
        case .enabled(true, _):
            // What happened while it was disabled is skipped: it reads on from the log's end.
            try connection.withStatement(
                """
                UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, failing_since_ms = NULL,
                    position = CASE WHEN enabled = 1 THEN position ELSE ? END
                WHERE id = ?
                """
            ) { update throws(StorageError) in
                update.bind(1, try logEnd(connection).description)
                update.bind(2, id)
                try update.step()
            }
        case .enabled(false, let reason):
            try connection.withStatement(
                "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ? WHERE id = ?"
            ) { update throws(StorageError) in
                update.bind(1, reason ?? "disabled")
                update.bind(2, id)
                try update.step()
            }
        case .rotated(let secret, let until):
            try connection.withStatement(
                """
                UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until_ms = ?, secret = ?
                WHERE id = ?
                """
            ) { update throws(StorageError) in
                update.bind(1, until)
                update.bind(2, secret)
                update.bind(3, id)
                try update.step()
            }
        case .failing(let since?):
            try connection.withStatement(
                "UPDATE webhook_endpoints SET failing_since_ms = coalesce(failing_since_ms, ?) WHERE id = ?"
            ) { update throws(StorageError) in
                update.bind(1, since)
                update.bind(2, id)
                try update.step()
            }
        case .failing(nil):
            try connection.withStatement(
                "UPDATE webhook_endpoints SET failing_since_ms = NULL WHERE id = ? AND failing_since_ms IS NOT NULL"
            ) { update throws(StorageError) in
                update.bind(1, id)
                try update.step()
            }
        }
    }

    public func deleteWebhookEndpoint(id: Int64) throws(StorageError) -> Bool {
        try withWriter { connection throws(StorageError) -> Bool in
            try connection.transaction { () throws(StorageError) -> Bool in
                guard try !Self.endpoints(where: id, connection).isEmpty else { return false }
                for sql: StaticString in [
                    "DELETE FROM webhook_attempts WHERE endpoint_id = ?",
                    "DELETE FROM webhook_deliveries WHERE endpoint_id = ?",
                    "DELETE FROM webhook_endpoints WHERE id = ?",
                ] {
                    try connection.withStatement(sql) { delete throws(StorageError) in
                        delete.bind(1, id)
                        try delete.step()
                    }
                }
                return true
            }
        }
    }

    public func webhookEvent(id: Int64) throws(StorageError) -> OrderEvent? {
        try events(after: EventPosition(id: id - 1), orderID: nil, limit: 1).first { $0.position.id == id }
    }

    /// One process writes a SQLite database (its lock sees to that), so the right to read an
    /// endpoint's log is always this process's: a lease left by a killed one is taken at once.
    public func leaseWebhookStream(
        endpointID: Int64, owner: String, nowMilliseconds: Int64, untilMilliseconds: Int64
    ) throws(StorageError) -> EventPosition? {
        try withReader { connection throws(StorageError) -> EventPosition? in
            try connection.withStatement("SELECT position FROM webhook_endpoints WHERE id = ? AND enabled = 1") {
                query throws(StorageError) -> EventPosition? in
                query.bind(1, endpointID)
                return try query.step() ? EventPosition(text: query.string(0)) : nil
            }
        }
    }

    public func webhookOrdersWaiting(endpointID: Int64, orderIDs: [Int64]) throws(StorageError) -> Set<Int64> {
        guard !orderIDs.isEmpty else { return [] }
        return try withReader { connection throws(StorageError) -> Set<Int64> in
            // Nothing owed at all (the usual case): one look at the index.
            let any = try connection.withStatement(
                "SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending' LIMIT 1"
            ) { query throws(StorageError) -> Bool in
                query.bind(1, endpointID)
                return try query.step()
            }
            guard any else { return [] }
            var waiting: Set<Int64> = []
            try connection.withStatement(
                "SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ? AND order_id = ? AND state = 'pending' LIMIT 1"
            ) { query throws(StorageError) in
                for orderID in Set(orderIDs) {
                    query.reset()
                    query.bind(1, endpointID)
                    query.bind(2, orderID)
                    if try query.step() { waiting.insert(orderID) }
                }
            }
            return waiting
        }
    }

    public func recordWebhookBatch(_ batch: WebhookBatch) throws(StorageError) -> Bool {
        try withWriter { connection throws(StorageError) -> Bool in
            try connection.transaction { () throws(StorageError) -> Bool in
                let moved = try connection.withStatement(
                    "UPDATE webhook_endpoints SET position = ?, stream_owner = ? WHERE id = ? AND position = ?"
                ) { update throws(StorageError) -> Bool in
                    update.bind(1, batch.to.description)
                    update.bind(2, batch.owner)
                    update.bind(3, batch.endpointID)
                    update.bind(4, batch.from.description)
                    try update.step()
                    return connection.changes > 0
                }
                guard moved else { return false }
                try Self.insert(batch.attempts, connection)
                for delivery in batch.deliveries {
                    try connection.withStatement(
                        """
                        INSERT OR IGNORE INTO webhook_deliveries (endpoint_id, event_id, order_id, type, body, attempts,
                            next_attempt_ms, lease_owner, lease_until_ms, created_at_ms)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """
                    ) { insert throws(StorageError) in
                        insert.bind(1, delivery.endpointID)
                        insert.bind(2, delivery.eventID)
                        insert.bind(3, delivery.orderID)
                        insert.bind(4, delivery.type)
                        insert.bind(5, delivery.body)
                        insert.bind(6, delivery.attempts)
                        insert.bind(7, delivery.nextAttemptMilliseconds)
                        if let lease = delivery.lease { insert.bind(8, lease.owner) }
                        insert.bind(9, delivery.lease?.untilMilliseconds ?? 0)
                        insert.bind(10, batch.nowMilliseconds)
                        try insert.step()
                    }
                }
                if let change = batch.endpointChange { try Self.apply(change, to: batch.endpointID, connection) }
                return true
            }
        }
    }

    /// Adds attempts, in one statement per attempt, when their endpoint is still there.
    private static func insert(_ attempts: [WebhookAttempt], _ connection: SQLiteConnection) throws(StorageError) {
        guard !attempts.isEmpty else { return }
        try connection.withStatement(
            """
            INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, at_ms, status, duration_ms, error)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?2)
            """
        ) { insert throws(StorageError) in
            for attempt in attempts {
                insert.reset()
                insert.bind(1, attempt.deliveryID)
                insert.bind(2, attempt.endpointID)
                insert.bind(3, attempt.eventID)
                insert.bind(4, attempt.atMilliseconds)
                insert.bind(5, attempt.status)
                insert.bind(6, attempt.durationMilliseconds)
                if let error = attempt.error { insert.bind(7, error) }
                try insert.step()
            }
        }
    }

    static let dueDeliveries: StaticString = """
        SELECT d.id, d.endpoint_id, d.event_id, d.order_id, d.type, d.body, d.attempts, d.next_attempt_ms
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled = 1
        WHERE d.state = 'pending' AND d.next_attempt_ms <= ?1 AND d.lease_until_ms <= ?1
            AND NOT EXISTS (
                SELECT 1 FROM webhook_deliveries p
                WHERE p.endpoint_id = d.endpoint_id AND p.order_id = d.order_id AND p.state = 'pending' AND p.id < d.id)
        ORDER BY d.next_attempt_ms, d.id LIMIT ?2
        """

    private static func due(_ connection: SQLiteConnection, now: Int64, limit: Int) throws(StorageError)
        -> [WebhookDelivery]
    {
        try connection.withStatement(dueDeliveries) { query throws(StorageError) -> [WebhookDelivery] in
            query.bind(1, now)
            query.bind(2, limit)
            var found: [WebhookDelivery] = []
            while try query.step() {
                found.append(
                    WebhookDelivery(
                        id: query.int64(0), endpointID: query.int64(1), eventID: query.int64(2),
                        orderID: query.int64(3), type: query.string(4), body: query.string(5), state: .pending,
                        attempts: query.int(6), nextAttemptMilliseconds: query.int64(7)))
            }
            return found
        }
    }

    public func claimWebhookDeliveries(
        owner: String, nowMilliseconds: Int64, leaseUntilMilliseconds: Int64, limit: Int
    ) throws(StorageError) -> [WebhookDelivery] {
        // Looked for on a reader first: an idle outbox takes no write lock from the orders.
        guard
            try !withReader({ connection throws(StorageError) in
                try Self.due(connection, now: nowMilliseconds, limit: 1)
            }).isEmpty
        else { return [] }
        return try withWriter { connection throws(StorageError) -> [WebhookDelivery] in
            try connection.transaction { () throws(StorageError) -> [WebhookDelivery] in
                let claimed = try Self.due(connection, now: nowMilliseconds, limit: limit)
                for delivery in claimed {
                    try connection.withStatement(
                        "UPDATE webhook_deliveries SET lease_owner = ?, lease_until_ms = ? WHERE id = ?"
                    ) { update throws(StorageError) in
                        update.bind(1, owner)
                        update.bind(2, leaseUntilMilliseconds)
                        update.bind(3, delivery.id)
                        try update.step()
                    }
                }
                return claimed
            }
        }
    }

    public func recordWebhookResults(_ results: [WebhookResult]) throws(StorageError) {
        guard !results.isEmpty else { return }
        try withWriter { connection throws(StorageError) in
            try connection.transaction { () throws(StorageError) in
                try Self.insert(results.map(\.attempt), connection)
                for result in results {
                    let attempt = result.attempt
                    let (state, next): (WebhookDelivery.State, Int64) =
                        switch result.outcome {
                        case .delivered: (.delivered, 0)
                        case .retry(let at): (.pending, at)
                        case .gaveUp: (.failed, 0)
                        }
                    try connection.withStatement(
                        """
                        UPDATE webhook_deliveries SET state = ?1, attempts = attempts + 1,
                            next_attempt_ms = CASE WHEN ?1 = 'pending' THEN ?2 ELSE next_attempt_ms END,
                            lease_owner = NULL, lease_until_ms = 0
                        WHERE endpoint_id = ?3 AND event_id = ?4
                        """
                    ) { update throws(StorageError) in
                        update.bind(1, state.rawValue)
                        update.bind(2, next)
                        update.bind(3, attempt.endpointID)
                        update.bind(4, attempt.eventID)
                        try update.step()
                    }
                    if let change = result.endpointChange { try Self.apply(change, to: attempt.endpointID, connection) }
                }
            }
        }
    }

    public func webhookAttempts(endpointID: Int64, limit: Int) throws(StorageError) -> [WebhookAttempt] {
        try withReader { connection throws(StorageError) -> [WebhookAttempt] in
            try connection.withStatement(
                """
                SELECT delivery_id, endpoint_id, event_id, at_ms, status, duration_ms, error FROM webhook_attempts
                WHERE endpoint_id = ? ORDER BY id DESC LIMIT ?
                """
            ) { query throws(StorageError) -> [WebhookAttempt] in
                query.bind(1, endpointID)
                query.bind(2, limit)
                var attempts: [WebhookAttempt] = []
                while try query.step() {
                    attempts.append(
                        WebhookAttempt(
                            deliveryID: query.int64(0), endpointID: query.int64(1), eventID: query.int64(2),
                            atMilliseconds: query.int64(3), status: query.int(4),
                            durationMilliseconds: query.int64(5), error: query.optionalString(6)))
                }
                return attempts
            }
        }
    }

    public func pruneWebhookHistory(beforeMilliseconds: Int64, limit: Int) throws(StorageError) -> Int {
        try withWriter { connection throws(StorageError) -> Int in
            try connection.transaction { () throws(StorageError) -> Int in
                var count = 0
                // Each looks at the `limit` oldest rows by id (ids grow with time), so one pass
                // reads a bounded part of the table while it holds the writer.
                for sql in Self.pruneStatements {
                    try connection.withStatement(sql) { delete throws(StorageError) in
                        delete.bind(1, beforeMilliseconds)
                        delete.bind(2, limit)
                        try delete.step()
                        count += connection.changes
                    }
                }
                return count
            }
        }
    }

    static let pruneStatements: [StaticString] = [
        """
        DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts ORDER BY id LIMIT ?2) AND at_ms < ?1
        """,
        """
        DELETE FROM webhook_deliveries
        WHERE id IN (SELECT id FROM webhook_deliveries WHERE state != 'pending' ORDER BY id LIMIT ?2)
            AND created_at_ms < ?1
        """,
    ]

    public func redeliverWebhookEvent(
        eventID: Int64, orderID: Int64, type: String, endpointIDs: [Int64], nowMilliseconds: Int64
    ) throws(StorageError) -> Int {
        guard !endpointIDs.isEmpty else { return 0 }
        return try withWriter { connection throws(StorageError) -> Int in
            try connection.transaction { () throws(StorageError) -> Int in
                var count = 0
                for endpointID in endpointIDs {
                    try connection.withStatement(
                        """
                        INSERT INTO webhook_deliveries (endpoint_id, event_id, order_id, type, body, next_attempt_ms,
                            created_at_ms)
                        SELECT ?1, ?2, ?3, ?4, '', ?5, ?5 WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?1)
                        ON CONFLICT (endpoint_id, event_id) DO UPDATE SET state = 'pending', attempts = 0,
                            next_attempt_ms = excluded.next_attempt_ms
                        """
                    ) { upsert throws(StorageError) in
                        upsert.bind(1, endpointID)
                        upsert.bind(2, eventID)
                        upsert.bind(3, orderID)
                        upsert.bind(4, type)
                        upsert.bind(5, nowMilliseconds)
                        try upsert.step()
                        count += connection.changes
                    }
                }
                return count
            }
        }
    }

    public func webhookBacklog() throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) {
        try withReader { connection throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) in
            // The deliveries owed, and for each enabled endpoint the events after its position.
            try connection.withStatement(
                """
                SELECT count(*), min(created_at_ms) FROM webhook_deliveries WHERE state = 'pending'
                UNION ALL
                SELECT (SELECT count(*) FROM order_events o WHERE o.id > CAST(e.position AS INTEGER)),
                    (SELECT min(o.at_ms) FROM order_events o WHERE o.id > CAST(e.position AS INTEGER))
                FROM webhook_endpoints e WHERE e.enabled = 1
                """
            ) { query throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) in
                var pending = 0
                var oldest: Int64?
                while try query.step() {
                    pending += query.int(0)
                    if let time = query.optionalString(1).flatMap({ Int64($0) }) { oldest = min(oldest ?? time, time) }
                }
                return (pending, oldest)
            }
        }
    }
}
