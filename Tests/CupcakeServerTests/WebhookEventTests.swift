import CupcakeDomain
import CupcakeJSON
import CupcakeStorage
import Foundation
import Testing

@testable import CupcakeServer

/// The payload a webhook and the feed carry, and the event time the dispatcher reads back from
/// it for the lag metric without parsing it.
@Suite struct WebhookEventTests {
    @Test(
        arguments: [
            (OrderStatus.placed, "order.placed"), (.baking, "order.status_changed"),
            (.delivered, "order.status_changed"), (.cancelled, "order.cancelled"),
        ])
    func thePayloadCarriesTheTypeTimeAndTheOrderAsTheEventLeftIt(_ status: OrderStatus, _ type: String) throws {
        let at: Int64 = 1_764_950_400_123
        let event = OrderEvent(
            position: EventPosition(id: 9), orderID: 7, version: 3,
            change: StatusChange(status: status, atMilliseconds: at, actor: .staff, reason: "oven"))
        let order = StoredOrder(
            id: 7,
            order: Order(
                type: 2, quantity: 5, name: "Ann", streetAddress: "1 Main St", city: "Nashville",
                zip: "37201"), costCents: 1100, createdAtMilliseconds: at - 5_000, isFavorite: false, receiptHash: nil)
        let body = WebhookEvent.payload(event, order: order)
        let parsed = try JSONValue.parse(Data(body.utf8))
        #expect(parsed["type"]?.string == type)
        #expect(parsed["timestamp"]?.string == Timestamp.iso8601(milliseconds: at))
        #expect(parsed["data"]?["id"]?.string == "7")
        #expect(parsed["data"]?["status"]?.string == status.wireName)
        #expect(parsed["data"]?["version"]?.integer == 3)
        #expect(WebhookDispatcher.eventTime(body) == at)
    }

    @Test(arguments: ["", "{}", #"{"type":"order.placed"}"#, #"{"type":"x","timestamp":"yesterday"}"#])
    func aBodyWithoutATimestampHasNoEventTime(_ body: String) {
        #expect(WebhookDispatcher.eventTime(body) == nil)
    }
}
