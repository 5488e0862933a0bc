import CupcakeDomain
import CupcakeJSON
import CupcakeStorage

extension StoredOrder {
    /// Writes the order as the API returns it: the wire keys plus id, createdAt, costCents,
    /// currency, isFavorite, status, statusChangedAt and version (and its history when it was
    /// read); in the 201 that created it (`created`) also the app's sentence as
    /// `message` and, the first time, `receiptToken`.
    func write(_ writer: inout JSONWriter, created: Bool = false, receiptToken: String? = nil) {
        writer.beginObject()
        order.writeFields(&writer)
        writer.key("id")
        writer.string(String(id))
        writer.key("createdAt")
        writer.timestamp(milliseconds: createdAtMilliseconds)
        writer.key("costCents")
        writer.integer(costCents)
        writer.key("currency")
        writer.string("USD")
        writer.key("isFavorite")
        writer.bool(isFavorite)
        writer.key("status")
        writer.string(status.wireName)
        writer.key("statusChangedAt")
        writer.timestamp(milliseconds: statusChangedAtMilliseconds)
        writer.key("version")
        writer.integer(Int(version))
        if let history {
            writer.key("history")
            writer.beginArray()
            for change in history {
                writer.beginObject()
                writer.key("status")
                writer.string(change.status.wireName)
                writer.key("at")
                writer.timestamp(milliseconds: change.atMilliseconds)
                writer.key("by")
                writer.string(change.actor.rawValue)
                if let reason = change.reason {
                    writer.key("reason")
                    writer.string(reason)
                }
                writer.endObject()
            }
            writer.endArray()
        }
        if created {
            writer.key("message")
            writer.string(order.confirmationMessage)
        }
        if let receiptToken {
            writer.key("receiptToken")
            writer.string(receiptToken)
        }
        writer.endObject()
    }

    /// The order as the 201 that created it answers it, with its receipt token.
    func json(receiptToken: String) -> [UInt8] {
        var writer = JSONWriter()
        write(&writer, created: true, receiptToken: receiptToken)
        return writer.bytes
    }

    /// The 201 as a replay of the same Idempotency-Key answers it: without the token, which is
    /// handed out once.
    var replayJSON: [UInt8] {
        var writer = JSONWriter()
        write(&writer, created: true)
        return writer.bytes
    }

    /// The order's entity tag: its version, quoted (`"v3"`), strong.
    var entityTag: String { "\"v\(version)\"" }

    /// The order wrapped as reqres's single resource: `{"data": {…}}`.
    var dataJSON: [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("data")
        write(&writer)
        writer.endObject()
        return writer.bytes
    }
}
