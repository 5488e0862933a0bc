/// The webhooks' state in SQLite (see ``WebhookStore``): one process writes, so the leases only
/// keep its own delivery threads apart, and the outbox cursor is the event id.
extension SQLiteOrderStore: WebhookStore {
    static let endpointColumns: StaticString = """
        SELECT id, url, event_types, secret, previous_secret, previous_secret_until_ms, enabled, disabled_reason,
            failing_since_ms, created_at_ms FROM webhook_endpoints
        """

    public func createWebhookEndpoint(url: String, eventTypes: [String], secret: String, nowMilliseconds: Int64)
        throws(StorageError) -> WebhookEndpoint
    {
        try withWriter { connection throws(StorageError) -> WebhookEndpoint in
            try connection.transaction { () throws(StorageError) -> WebhookEndpoint in
                try connection.withStatement(
                    "INSERT INTO webhook_endpoints (url, event_types, secret, created_at_ms) VALUES (?, ?, ?, ?) RETURNING id"
                ) { insert throws(StorageError) -> WebhookEndpoint in
                    let endpoint = WebhookEndpoint(
                        id: 0, url: url, eventTypes: eventTypes, secret: secret, createdAtMilliseconds: nowMilliseconds)
                    insert.bind(1, url)
                    insert.bind(2, endpoint.storedEventTypes)
                    insert.bind(3, secret)
                    insert.bind(4, nowMilliseconds)
                    guard try insert.step() else { throw StorageError(.failed, "no id for the new endpoint") }
                    var made = endpoint
                    made.id = insert.int64(0)
                    return made
                }
            }
        }
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
                        createdAtMilliseconds: query.int64(9)))
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
            try connection.withStatement(
                "UPDATE webhook_endpoints SET enabled = 1, disabled_reason = NULL, failing_since_ms = NULL WHERE id = ?"
            ) { update throws(StorageError) in
                update.bind(1, id)
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

    public func webhookCursor() throws(StorageError) -> EventPosition? {
        try withReader { connection throws(StorageError) in try Self.cursor(connection) }
    }

    private static func cursor(_ connection: SQLiteConnection) throws(StorageError) -> EventPosition? {
        try connection.withStatement("SELECT position FROM webhook_outbox WHERE id = 1") {
            query throws(StorageError) -> EventPosition? in
            try query.step() ? EventPosition(text: query.string(0)) : nil
        }
    }

    public func enqueueWebhookDeliveries(
        _ deliveries: [NewWebhookDelivery], from: EventPosition?, to: EventPosition, nowMilliseconds: Int64
    ) throws(StorageError) -> Bool {
        try withWriter { connection throws(StorageError) -> Bool in
            try connection.transaction { () throws(StorageError) -> Bool in
                guard try Self.cursor(connection) == from else { return false }
                for delivery in deliveries {
                    try connection.withStatement(
                        """
                        INSERT OR IGNORE INTO webhook_deliveries
                            (endpoint_id, event_id, order_id, type, body, next_attempt_ms, created_at_ms)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """
                    ) { insert throws(StorageError) in
                        insert.bind(1, delivery.endpointID)
                        insert.bind(2, delivery.eventID)
                        insert.bind(3, delivery.orderID)
                        insert.bind(4, delivery.type)
                        insert.bind(5, delivery.body)
                        insert.bind(6, nowMilliseconds)
                        insert.bind(7, nowMilliseconds)
                        try insert.step()
                    }
                }
                try connection.withStatement(
                    "INSERT INTO webhook_outbox (id, position) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET position = excluded.position"
                ) { upsert throws(StorageError) in
                    upsert.bind(1, to.description)
                    try upsert.step()
                }
                return true
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
                for result in results {
                    let attempt = result.attempt
                    try connection.withStatement(
                        """
                        INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, at_ms, status, duration_ms, error)
                        SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?2)
                        """
                    ) { insert throws(StorageError) in
                        insert.bind(1, attempt.deliveryID)
                        insert.bind(2, attempt.endpointID)
                        insert.bind(3, attempt.eventID)
                        insert.bind(4, attempt.atMilliseconds)
                        insert.bind(5, attempt.status)
                        insert.bind(6, attempt.durationMilliseconds)
                        if let error = attempt.error { insert.bind(7, error) }
                        try insert.step()
                    }
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
                        WHERE id = ?3
                        """
                    ) { update throws(StorageError) in
                        update.bind(1, state.rawValue)
                        update.bind(2, next)
                        update.bind(3, attempt.deliveryID)
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

    public func redeliverWebhookEvent(eventID: Int64, nowMilliseconds: Int64) throws(StorageError) -> Int {
        try withWriter { connection throws(StorageError) -> Int in
            try connection.transaction { () throws(StorageError) -> Int in
                try connection.withStatement(
                    """
                    UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_ms = ?
                    WHERE event_id = ? RETURNING id
                    """
                ) { update throws(StorageError) -> Int in
                    update.bind(1, nowMilliseconds)
                    update.bind(2, eventID)
                    var count = 0
                    while try update.step() { count += 1 }
                    return count
                }
            }
        }
    }

    public func webhookBacklog() throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) {
        try withReader { connection throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) in
            try connection.withStatement(
                "SELECT count(*), min(created_at_ms) FROM webhook_deliveries WHERE state = 'pending'"
            ) { query throws(StorageError) -> (pending: Int, oldestMilliseconds: Int64?) in
                guard try query.step() else { return (0, nil) }
                return (query.int(0), query.optionalString(1).flatMap { Int64($0) })
            }
        }
    }
}
