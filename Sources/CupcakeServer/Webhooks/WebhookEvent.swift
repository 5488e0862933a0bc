import CupcakeDomain
import CupcakeJSON
import CupcakeStorage

/// An event of the log as webhooks and the events feed carry it, in the Standard Webhooks
/// payload shape: `{"type", "timestamp", "data"}`, the data being the order as the event left
/// it (its status, time and version; its history up to the event).
enum WebhookEvent {
    /// Every event type, for endpoint subscriptions.
    static let types = ["order.placed", "order.status_changed", "order.cancelled"]

    /// The type of an event reaching `status`.
    static func type(of status: OrderStatus) -> String {
        switch status {
        case .placed: "order.placed"
        case .cancelled: "order.cancelled"
        default: "order.status_changed"
        }
    }

    /// The `webhook-id` of an event: the same on every attempt and redelivery.
    static func id(_ eventID: Int64) -> String { "evt_\(eventID)" }

    /// The event's id from its text (`evt_42`, or `42`).
    static func eventID(_ text: String) -> Int64? {
        let digits = text.hasPrefix("evt_") ? text.dropFirst(4) : Substring(text)
        guard !digits.isEmpty, digits.count <= 18, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int64(digits)
    }

    /// The payload of `event` for `order` (nil when the order cannot be read: then `data` holds
    /// only its id).
    static func payload(_ event: OrderEvent, order: StoredOrder?) -> String {
        var writer = JSONWriter()
        write(event, order: order, into: &writer, feed: false)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Writes the payload; for the feed, with the event's `id` and log `position` first.
    static func write(_ event: OrderEvent, order: StoredOrder?, into writer: inout JSONWriter, feed: Bool) {
        writer.beginObject()
        if feed {
            writer.key("id")
            writer.string(id(event.position.id))
            writer.key("position")
            writer.string(event.position.description)
        }
        writer.key("type")
        writer.string(type(of: event.change.status))
        writer.key("timestamp")
        writer.timestamp(milliseconds: event.change.atMilliseconds)
        writer.key("data")
        if var order {
            order.status = event.change.status
            order.statusChangedAtMilliseconds = event.change.atMilliseconds
            order.version = event.version
            order.history = order.history.map { history in
                Array(history.prefix { $0.atMilliseconds <= event.change.atMilliseconds }.prefix(Int(event.version)))
            }
            order.write(&writer)
        } else {
            writer.beginObject()
            writer.key("id")
            writer.string(String(event.orderID))
            writer.key("status")
            writer.string(event.change.status.wireName)
            writer.endObject()
        }
        writer.endObject()
    }
}
