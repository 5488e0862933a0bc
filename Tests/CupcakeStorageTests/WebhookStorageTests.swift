import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeStorage

/// The webhooks' state on each engine: endpoints, the outbox cursor that adds each event once,
/// claims that keep an order's events in their order and never hand one delivery out twice
/// while its lease runs, and results that retry, finish or disable.
@Suite struct WebhookStorageTests {
    static func delivery(endpoint: Int64, event: Int64, order: Int64) -> NewWebhookDelivery {
        NewWebhookDelivery(
            endpointID: endpoint, eventID: event, orderID: order, type: "order.placed", body: "{\"e\":\(event)}")
    }

    static func attempt(_ delivery: WebhookDelivery, at: Int64, status: Int) -> WebhookAttempt {
        WebhookAttempt(
            deliveryID: delivery.id, endpointID: delivery.endpointID, eventID: delivery.eventID, atMilliseconds: at,
            status: status, durationMilliseconds: 3, error: status == 0 ? "refused" : nil)
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
        let enabled = try #require(try store.changeWebhookEndpoint(id: made.id, .enabled(true, reason: nil)))
        #expect(enabled.enabled && enabled.disabledReason == nil && enabled.failingSinceMilliseconds == nil)
        #expect(try store.changeWebhookEndpoint(id: made.id + 100, .enabled(true, reason: nil)) == nil)
        #expect(try store.deleteWebhookEndpoint(id: made.id))
        #expect(try !store.deleteWebhookEndpoint(id: made.id))
        #expect(try store.webhookEndpoints().isEmpty)
    }

    @Test(arguments: Engine.allCases)
    func theCursorAddsEachEventOnce(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let endpoint = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/", eventTypes: [], secret: "whsec_a", nowMilliseconds: 1)
        #expect(try store.webhookCursor() == nil)
        let first = [Self.delivery(endpoint: endpoint.id, event: 1, order: 1)]
        #expect(try store.enqueueWebhookDeliveries(first, from: nil, to: EventPosition(id: 1), nowMilliseconds: 5))
        #expect(try store.webhookCursor() == EventPosition(id: 1))
        // A second reader of the same events, from where the cursor was: adds nothing.
        #expect(try !store.enqueueWebhookDeliveries(first, from: nil, to: EventPosition(id: 1), nowMilliseconds: 5))
        // The same event again from the right place: ignored, not an error.
        #expect(
            try store.enqueueWebhookDeliveries(
                first + [Self.delivery(endpoint: endpoint.id, event: 2, order: 1)], from: EventPosition(id: 1),
                to: EventPosition(id: 2), nowMilliseconds: 6))
        #expect(try store.webhookBacklog().pending == 2)
        #expect(try store.webhookBacklog().oldestMilliseconds == 5)
    }

    @Test(arguments: Engine.allCases)
    func anOrdersEventsGoInOrderAndLeasesKeepClaimsApart(_ engine: Engine) throws {
        let subject = try GroupCommitTests.subject(engine)
        let store = subject.store
        defer { store.close() }
        let endpoint = try store.createWebhookEndpoint(
            url: "http://127.0.0.1:9/", eventTypes: [], secret: "whsec_a", nowMilliseconds: 1)
        // Order 1: events 1 and 3; order 2: event 2.
        let deliveries = [(1, 1), (2, 2), (3, 1)].map { Self.delivery(endpoint: endpoint.id, event: $0.0, order: $0.1) }
        #expect(
            try store.enqueueWebhookDeliveries(deliveries, from: nil, to: EventPosition(id: 3), nowMilliseconds: 10))
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
        #expect(
            try store.enqueueWebhookDeliveries(
                [Self.delivery(endpoint: endpoint.id, event: 7, order: 1)], from: nil, to: EventPosition(id: 7),
                nowMilliseconds: 10))
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
        #expect(again.map(\.eventID) == [7])
        try store.recordWebhookResults([
            WebhookResult(attempt: Self.attempt(again[0], at: 51, status: 0), outcome: .gaveUp, endpointChange: nil)
        ])
        #expect(try store.webhookBacklog().pending == 0)
        #expect(try store.redeliverWebhookEvent(eventID: 7, nowMilliseconds: 60) == 1)
        #expect(try store.redeliverWebhookEvent(eventID: 8, nowMilliseconds: 60) == 0)
        let redelivered = try store.claimWebhookDeliveries(
            owner: "a", nowMilliseconds: 60, leaseUntilMilliseconds: 100, limit: 5)
        #expect(redelivered.map(\.eventID) == [7])
        #expect(redelivered.first?.attempts == 0)
    }
}
