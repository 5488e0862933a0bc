import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeStorage

/// The webhooks' state on each engine: endpoints that read the log from their position, moved
/// once per stretch by the instance reading it with what the stretch still owes stored, claims
/// that keep an order's events in their order and never hand one delivery out twice while its
/// lease runs, and results that retry, finish or disable.
@Suite struct WebhookStorageTests {
    static func delivery(endpoint: Int64, event: Int64, order: Int64) -> NewWebhookDelivery {
        NewWebhookDelivery(
            endpointID: endpoint, eventID: event, orderID: order, type: "order.placed", body: "{\"e\":\(event)}")
    }

    static func attempt(endpoint: Int64, event: Int64, at: Int64, status: Int) -> WebhookAttempt {
        WebhookAttempt(
            deliveryID: 0, endpointID: endpoint, eventID: event, atMilliseconds: at, status: status,
            durationMilliseconds: 3, error: (200...299).contains(status) ? nil : "refused")
    }

    static func attempt(_ delivery: WebhookDelivery, at: Int64, status: Int) -> WebhookAttempt {
        attempt(endpoint: delivery.endpointID, event: delivery.eventID, at: at, status: status)
    }

    /// Places `count` orders: their `order.placed` events, in the log's order.
    static func place(_ count: Int, in store: any OrderStore, after position: EventPosition) throws -> [OrderEvent] {
        _ = try store.insert(StorageFixtures.newOrders(0..<count))
        // On PostgreSQL the log is read up to the oldest transaction still running anywhere on the
        // server (other tests run beside this one): wait, a bounded while, for it to pass them.
        var events: [OrderEvent] = []
        for _ in 0..<500 {
            events = try store.events(after: position, orderID: nil, limit: 100)
            if events.count >= count { break }
            usleep(10_000)
        }
        try #require(events.count == count)
        return events
    }

    /// Stores deliveries for events, as a stretch from the endpoint's position to the last one.
    static func store(
        _ deliveries: [NewWebhookDelivery], _ store: any OrderStore, endpoint: WebhookEndpoint, to: EventPosition
    ) throws {
        #expect(
            try store.leaseWebhookStream(
                endpointID: endpoint.id, owner: "a", nowMilliseconds: 10, untilMilliseconds: 20)
                == endpoint.position)
        #expect(
            try store.recordWebhookBatch(
                WebhookBatch(
                    endpointID: endpoint.id, owner: "a", from: endpoint.position, to: to, attempts: [],
                    deliveries: deliveries, endpointChange: nil, nowMilliseconds: 10)))
    }

    @Test(arguments: Engine.allCases)
    func endpointsAreMadeChangedAndRemoved(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let made = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/hook", eventTypes: ["order.placed", "order.cancelled"], secret: "whsec_a",
            nowMilliseconds: 10)
        #expect(made.id > 0)
        #expect(try store.webhookEndpoints() == [made])
        #expect(made.receives("order.cancelled") && !made.receives("order.status_changed"))
        let rotated = try #require(
            try store.changeWebhookEndpoint(id: made.id, .rotated(secret: "whsec_b", previousUntilMilliseconds: 100)))
        #expect(rotated.secret == "whsec_b" && rotated.previousSecret == "whsec_a")
        #expect(rotated.signingSecrets(nowMilliseconds: 99) == ["whsec_b", "whsec_a"])
        #expect(rotated.signingSecrets(nowMilliseconds: 100) == ["whsec_b"])
        let failing = try #require(try store.changeWebhookEndpoint(id: made.id, .failing(sinceMilliseconds: 50)))
        #expect(failing.failingSinceMilliseconds == 50)
        // The first failure is kept: a later one does not move it.
        #expect(
            try store.changeWebhookEndpoint(id: made.id, .failing(sinceMilliseconds: 70))?.failingSinceMilliseconds
                == 50)
        let disabled = try #require(try store.changeWebhookEndpoint(id: made.id, .enabled(false, reason: "410 Gone")))
        #expect(!disabled.enabled && disabled.disabledReason == "410 Gone")
        // Events while it is disabled are skipped: enabled again, it reads on from the log's end.
        let missed = try Self.place(2, in: store, after: made.position)
        let enabled = try #require(try store.changeWebhookEndpoint(id: made.id, .enabled(true, reason: nil)))
        #expect(enabled.enabled && enabled.disabledReason == nil && enabled.failingSinceMilliseconds == nil)
        #expect(enabled.position >= missed[1].position)
        #expect(try store.events(after: enabled.position, orderID: nil, limit: 10).isEmpty)
        #expect(try store.changeWebhookEndpoint(id: made.id + 100, .enabled(true, reason: nil)) == nil)
        #expect(try store.deleteWebhookEndpoint(id: made.id))
        #expect(try !store.deleteWebhookEndpoint(id: made.id))
        #expect(try store.webhookEndpoints().isEmpty)
    }

    @Test(arguments: Engine.allCases)
    func aStretchMovesThePositionOnceAndStoresWhatIsOwed(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        // An endpoint reads the log from its end when it is made: earlier events are not its.
        let before = try Self.place(1, in: store, after: .start)
        let endpoint = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/", eventTypes: [], secret: "whsec_a", nowMilliseconds: 1)
        #expect(endpoint.position >= before[0].position)
        let events = try Self.place(3, in: store, after: endpoint.position)
        let from = try #require(
            try store.leaseWebhookStream(
                endpointID: endpoint.id, owner: "a", nowMilliseconds: 10, untilMilliseconds: 1_000))
        #expect(from == endpoint.position)
        #expect(try store.webhookBacklog().pending == 3)
        // The first event delivered, the second failed, the third still being sent.
        let (one, two, three) = (events[0], events[1], events[2])
        let stretch = WebhookBatch(
            endpointID: endpoint.id, owner: "a", from: from, to: three.position,
            attempts: [
                Self.attempt(endpoint: endpoint.id, event: one.position.id, at: 11, status: 204),
                Self.attempt(endpoint: endpoint.id, event: two.position.id, at: 12, status: 500),
            ],
            deliveries: [
                NewWebhookDelivery(
                    endpointID: endpoint.id, eventID: two.position.id, orderID: two.orderID, type: "order.placed",
                    body: "{\"e\":2}", attempts: 1, nextAttemptMilliseconds: 2_000),
                NewWebhookDelivery(
                    endpointID: endpoint.id, eventID: three.position.id, orderID: three.orderID,
                    type: "order.placed", body: "", nextAttemptMilliseconds: 13,
                    lease: WebhookLease(owner: "a", untilMilliseconds: 1_000)),
            ], endpointChange: .failing(sinceMilliseconds: 12), nowMilliseconds: 13)
        #expect(try store.recordWebhookBatch(stretch))
        // A second reader of the same stretch, from where the position was: records nothing.
        #expect(try !store.recordWebhookBatch(stretch))
        #expect(try store.webhookEndpoints().first?.position == three.position)
        #expect(try store.webhookEndpoints().first?.failingSinceMilliseconds == 12)
        let attempts = try store.webhookAttempts(endpointID: endpoint.id, limit: 10)
        #expect(attempts.map(\.status) == [500, 204])
        #expect(attempts.map(\.error) == ["refused", nil])
        // The orders whose later events must wait.
        #expect(
            try store.webhookOrdersWaiting(endpointID: endpoint.id, orderIDs: events.map(\.orderID))
                == [two.orderID, three.orderID])
        #expect(try store.webhookBacklog().pending == 2)
        #expect(try store.webhookBacklog().oldestMilliseconds == 13)
        // The one being sent is nobody else's until its lease ends; the failed one is due at 2,000.
        #expect(
            try store.claimWebhookDeliveries(owner: "b", nowMilliseconds: 999, leaseUntilMilliseconds: 5_000, limit: 9)
                .isEmpty)
        let taken = try store.claimWebhookDeliveries(
            owner: "b", nowMilliseconds: 1_000, leaseUntilMilliseconds: 5_000, limit: 9)
        #expect(taken.map(\.eventID) == [three.position.id])
        #expect(taken.first?.body == "")
        // Results find their delivery by endpoint and event.
        try store.recordWebhookResults([
            WebhookResult(
                attempt: Self.attempt(taken[0], at: 1_001, status: 200), outcome: .delivered, endpointChange: nil)
        ])
        let retried = try store.claimWebhookDeliveries(
            owner: "b", nowMilliseconds: 2_000, leaseUntilMilliseconds: 5_000, limit: 9)
        #expect(retried.map(\.eventID) == [two.position.id])
        #expect(retried.first?.attempts == 1 && retried.first?.body == "{\"e\":2}")
        #expect(try store.webhookEvent(id: two.position.id) == two)
        #expect(try store.webhookEvent(id: three.position.id + 100) == nil)
    }

    @Test(arguments: Engine.allCases)
    func oneInstanceAtATimeReadsAnEndpointsLog(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let endpoint = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/", eventTypes: [], secret: "whsec_a", nowMilliseconds: 1)
        let events = try Self.place(1, in: store, after: endpoint.position)
        #expect(
            try store.leaseWebhookStream(
                endpointID: endpoint.id, owner: "a", nowMilliseconds: 10, untilMilliseconds: 100)
                == endpoint.position)
        let theirs = WebhookBatch(
            endpointID: endpoint.id, owner: "b", from: endpoint.position, to: events[0].position, attempts: [],
            deliveries: [], endpointChange: nil, nowMilliseconds: 20)
        if engine == .postgres {
            // Another instance waits for the lease to end, and cannot move the position meanwhile.
            #expect(
                try store.leaseWebhookStream(
                    endpointID: endpoint.id, owner: "b", nowMilliseconds: 99, untilMilliseconds: 200) == nil)
            #expect(try !store.recordWebhookBatch(theirs))
        }
        // Once it has ended (on SQLite at once: one process writes the file), it takes over.
        #expect(
            try store.leaseWebhookStream(
                endpointID: endpoint.id, owner: "b", nowMilliseconds: 100, untilMilliseconds: 200)
                == endpoint.position)
        #expect(try store.recordWebhookBatch(theirs))
        // A disabled endpoint is read by nobody.
        _ = try store.changeWebhookEndpoint(id: endpoint.id, .enabled(false, reason: "by the staff"))
        #expect(
            try store.leaseWebhookStream(
                endpointID: endpoint.id, owner: "b", nowMilliseconds: 300, untilMilliseconds: 400)
                == nil)
        #expect(try store.webhookBacklog().pending == 0)
    }

    @Test(arguments: Engine.allCases)
    func anOrdersEventsGoInOrderAndLeasesKeepClaimsApart(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let endpoint = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/", eventTypes: [], secret: "whsec_a", nowMilliseconds: 1)
        // Order 1: events 1 and 3; order 2: event 2 (owed, as a stretch stores them).
        let deliveries = [(1, 1), (2, 2), (3, 1)].map { Self.delivery(endpoint: endpoint.id, event: $0.0, order: $0.1) }
        let events = try Self.place(3, in: store, after: endpoint.position)
        try Self.store(deliveries, store, endpoint: endpoint, to: events[2].position)
        let claimed = try store.claimWebhookDeliveries(
            owner: "a", nowMilliseconds: 10, leaseUntilMilliseconds: 1_000, limit: 10)
        // Event 3 waits for event 1 (same order); event 2 does not.
        #expect(claimed.map(\.eventID) == [1, 2])
        // Leased: no one else gets them, or event 3, before the lease ends.
        #expect(
            try store.claimWebhookDeliveries(owner: "b", nowMilliseconds: 500, leaseUntilMilliseconds: 900, limit: 10)
                .isEmpty)
        // Event 1 fails: retried at 2,000; event 3 still waits behind it.
        let one = try #require(claimed.first { $0.eventID == 1 })
        let two = try #require(claimed.first { $0.eventID == 2 })
        try store.recordWebhookResults([
            WebhookResult(
                attempt: Self.attempt(one, at: 20, status: 500), outcome: .retry(atMilliseconds: 2_000),
                endpointChange: .failing(sinceMilliseconds: 20)),
            WebhookResult(attempt: Self.attempt(two, at: 21, status: 204), outcome: .delivered, endpointChange: nil),
        ])
        #expect(
            try store.claimWebhookDeliveries(
                owner: "b", nowMilliseconds: 1_500, leaseUntilMilliseconds: 9_000, limit: 10
            ).isEmpty)
        let retried = try store.claimWebhookDeliveries(
            owner: "b", nowMilliseconds: 2_000, leaseUntilMilliseconds: 9_000, limit: 10)
        #expect(retried.map(\.eventID) == [1])
        #expect(retried.first?.attempts == 1)
        try store.recordWebhookResults([
            WebhookResult(
                attempt: Self.attempt(retried[0], at: 2_001, status: 200), outcome: .delivered,
                endpointChange: .failing(sinceMilliseconds: nil))
        ])
        let last = try store.claimWebhookDeliveries(
            owner: "b", nowMilliseconds: 2_002, leaseUntilMilliseconds: 9_000, limit: 10)
        #expect(last.map(\.eventID) == [3])
        // A killed claimer's lease ends: another takes the delivery over.
        let takenOver = try store.claimWebhookDeliveries(
            owner: "c", nowMilliseconds: 9_000, leaseUntilMilliseconds: 20_000, limit: 10)
        #expect(takenOver.map(\.eventID) == [3])
        let attempts = try store.webhookAttempts(endpointID: endpoint.id, limit: 10)
        #expect(attempts.map(\.status) == [200, 204, 500])
        #expect(try store.webhookEndpoints().first?.failingSinceMilliseconds == nil)
        #expect(try store.webhookBacklog().pending == 1)
    }

    @Test(arguments: Engine.allCases)
    func aDisabledEndpointWaitsAndRedeliveryStartsOver(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let endpoint = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/", eventTypes: [], secret: "whsec_a", nowMilliseconds: 1)
        let events = try Self.place(1, in: store, after: endpoint.position)
        let event = events[0]
        try Self.store(
            [Self.delivery(endpoint: endpoint.id, event: event.position.id, order: event.orderID)], store,
            endpoint: endpoint, to: event.position)
        let claimed = try store.claimWebhookDeliveries(
            owner: "a", nowMilliseconds: 10, leaseUntilMilliseconds: 100, limit: 5)
        try store.recordWebhookResults([
            WebhookResult(
                attempt: Self.attempt(claimed[0], at: 11, status: 410), outcome: .retry(atMilliseconds: 20),
                endpointChange: .enabled(false, reason: "410 Gone"))
        ])
        #expect(
            try store.claimWebhookDeliveries(owner: "a", nowMilliseconds: 50, leaseUntilMilliseconds: 100, limit: 5)
                .isEmpty)
        _ = try store.changeWebhookEndpoint(id: endpoint.id, .enabled(true, reason: nil))
        let again = try store.claimWebhookDeliveries(
            owner: "a", nowMilliseconds: 50, leaseUntilMilliseconds: 100, limit: 5)
        #expect(again.map(\.eventID) == [event.position.id])
        try store.recordWebhookResults([
            WebhookResult(attempt: Self.attempt(again[0], at: 51, status: 0), outcome: .gaveUp, endpointChange: nil)
        ])
        #expect(try store.webhookBacklog().pending == 0)
        // Redelivery starts the stored delivery over, and makes one (bodiless, made when sent)
        // at an endpoint that has none (it was delivered as it was read).
        let other = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/other", eventTypes: [], secret: "whsec_b", nowMilliseconds: 1)
        #expect(
            try store.redeliverWebhookEvent(
                eventID: event.position.id, orderID: event.orderID, type: "order.placed",
                endpointIDs: [endpoint.id, other.id, other.id + 100], nowMilliseconds: 60) == 2)
        #expect(
            try store.redeliverWebhookEvent(
                eventID: event.position.id, orderID: event.orderID, type: "order.placed", endpointIDs: [],
                nowMilliseconds: 60) == 0)
        let redelivered = try store.claimWebhookDeliveries(
            owner: "a", nowMilliseconds: 60, leaseUntilMilliseconds: 100, limit: 5)
        #expect(redelivered.map(\.eventID) == [event.position.id, event.position.id])
        #expect(redelivered.map(\.attempts) == [0, 0])
        #expect(Set(redelivered.map(\.body)) == ["{\"e\":\(event.position.id)}", ""])
    }

    @Test(arguments: Engine.allCases)
    func historyOlderThanTheCutoffGoesButWhatIsOwedStays(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let endpoint = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/", eventTypes: [], secret: "whsec_a", nowMilliseconds: 1)
        let events = try Self.place(6, in: store, after: endpoint.position)
        // Made at 10 (old): events 0–3 owed; then 0 delivered, 1 failed for good, 2 and 3 still
        // owed. Made at 5,000 (recent): events 4 and 5, 4 delivered.
        let old = events[0..<4].map { Self.delivery(endpoint: endpoint.id, event: $0.position.id, order: $0.orderID) }
        try Self.store(old, store, endpoint: endpoint, to: events[3].position)
        let claimed = try store.claimWebhookDeliveries(
            owner: "a", nowMilliseconds: 20, leaseUntilMilliseconds: 100, limit: 10)
        #expect(claimed.count == 4)
        try store.recordWebhookResults([
            WebhookResult(
                attempt: Self.attempt(claimed[0], at: 30, status: 204), outcome: .delivered, endpointChange: nil),
            WebhookResult(
                attempt: Self.attempt(claimed[1], at: 31, status: 500), outcome: .gaveUp, endpointChange: nil),
            WebhookResult(
                attempt: Self.attempt(claimed[2], at: 32, status: 500), outcome: .retry(atMilliseconds: 9_000),
                endpointChange: nil),
        ])
        let recent = WebhookBatch(
            endpointID: endpoint.id, owner: "a", from: events[3].position, to: events[5].position,
            attempts: [Self.attempt(endpoint: endpoint.id, event: events[4].position.id, at: 5_001, status: 204)],
            deliveries: [Self.delivery(endpoint: endpoint.id, event: events[5].position.id, order: events[5].orderID)],
            endpointChange: nil, nowMilliseconds: 5_000)
        #expect(
            try store.leaseWebhookStream(
                endpointID: endpoint.id, owner: "a", nowMilliseconds: 5_000, untilMilliseconds: 9_000)
                == events[3].position)
        #expect(try store.recordWebhookBatch(recent))
        #expect(try store.webhookAttempts(endpointID: endpoint.id, limit: 10).count == 4)
        // At most one row of each table per call: the oldest attempt, the oldest finished delivery.
        #expect(try store.pruneWebhookHistory(beforeMilliseconds: 1_000, limit: 1) == 2)
        #expect(try store.webhookAttempts(endpointID: endpoint.id, limit: 10).map(\.atMilliseconds) == [5_001, 32, 31])
        // Then the rest before the cutoff: two attempts and the failed delivery.
        #expect(try store.pruneWebhookHistory(beforeMilliseconds: 1_000, limit: 100) == 3)
        #expect(try store.pruneWebhookHistory(beforeMilliseconds: 1_000, limit: 100) == 0)
        #expect(try store.webhookAttempts(endpointID: endpoint.id, limit: 10).map(\.atMilliseconds) == [5_001])
        // What is still owed is kept, however old: its claims and its order's later events go on.
        #expect(try store.webhookBacklog().pending == 3)
        #expect(
            try store.webhookOrdersWaiting(endpointID: endpoint.id, orderIDs: events.map(\.orderID))
                == [events[2].orderID, events[3].orderID, events[5].orderID])
        let due = try store.claimWebhookDeliveries(
            owner: "b", nowMilliseconds: 9_000, leaseUntilMilliseconds: 20_000, limit: 10)
        #expect(due.map(\.eventID).sorted() == [2, 3, 5].map { events[$0].position.id })
        // Redelivery of a pruned event makes its delivery again.
        #expect(
            try store.redeliverWebhookEvent(
                eventID: events[0].position.id, orderID: events[0].orderID, type: "order.placed",
                endpointIDs: [endpoint.id], nowMilliseconds: 9_000) == 1)
    }
}
