import CupcakeDomain
import CupcakeStorage

extension Order {
    /// Writes the order's nine wire keys, in the app's order, into an open object.
    func writeFields(_ writer: inout JSONWriter) {
        writer.key("type")
        writer.integer(type)
        writer.key("quantity")
        writer.integer(quantity)
        writer.key("specialRequestEnabled")
        writer.bool(specialRequestEnabled)
        writer.key("extraFrosting")
        writer.bool(extraFrosting)
        writer.key("addSprinkles")
        writer.bool(addSprinkles)
        writer.key("name")
        writer.string(name)
        writer.key("streetAddress")
        writer.string(streetAddress)
        writer.key("city")
        writer.string(city)
        writer.key("zip")
        writer.string(zip)
    }

    /// The normalized order as canonical JSON: what an Idempotency-Key's request is compared by.
    var fingerprint: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writeFields(&writer)
        writer.endObject()
        return writer.bytes
    }
}

extension StoredOrder {
    /// Writes the order as the API returns it: the wire keys plus id, createdAt, costCents,
    /// currency and isFavorite.
    func write(_ writer: inout JSONWriter) {
        writer.beginObject()
        order.writeFields(&writer)
        writer.key("id")
        writer.string(String(id))
        writer.key("createdAt")
        writer.string(Timestamp.iso8601(milliseconds: createdAtMilliseconds))
        writer.key("costCents")
        writer.integer(costCents)
        writer.key("currency")
        writer.string("USD")
        writer.key("isFavorite")
        writer.bool(isFavorite)
        writer.endObject()
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
