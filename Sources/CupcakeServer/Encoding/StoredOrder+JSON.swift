import CupcakeDomain
import CupcakeStorage

extension StoredOrder {
    /// Writes the order as the API returns it: the wire keys plus id, createdAt, costCents,
    /// currency and isFavorite (and `receiptToken`, in the 201 that created it).
    func write(_ writer: inout JSONWriter, receiptToken: String? = nil) {
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
        if let receiptToken {
            writer.key("receiptToken")
            writer.string(receiptToken)
        }
        writer.endObject()
    }

    /// The order as the 201 that created it answers it, with its receipt token.
    func json(receiptToken: String) -> [UInt8] {
        var writer = JSONWriter()
        write(&writer, receiptToken: receiptToken)
        return writer.bytes
    }

    /// The order alone, as POST answers it.
    var json: [UInt8] {
        var writer = JSONWriter()
        write(&writer)
        return writer.bytes
    }

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
