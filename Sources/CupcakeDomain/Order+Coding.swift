import CupcakeJSON
import FoundationEssentials

extension Order: Codable {
    /// The wire keys, exactly as the Cupcake Corner app sends them.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case type
        case quantity
        case specialRequestEnabled
        case extraFrosting
        case addSprinkles
        case name
        case streetAddress
        case city
        case zip
    }

    /// Decodes either app encoding and applies the reset rule.
    ///
    /// `type` and `quantity` are required. When `specialRequestEnabled` is absent (the app's
    /// older encoding), special requests are on exactly when an extra is true; when it is false,
    /// the extras are cleared. Missing or null address fields are empty. Unknown keys are ignored.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let frosting = try container.decodeIfPresent(Bool.self, forKey: .extraFrosting) ?? false
        let sprinkles = try container.decodeIfPresent(Bool.self, forKey: .addSprinkles) ?? false
        let special = try container.decodeIfPresent(Bool.self, forKey: .specialRequestEnabled)
        self.init(
            type: try container.decode(Int.self, forKey: .type),
            quantity: try container.decode(Int.self, forKey: .quantity),
            specialRequestEnabled: special ?? (frosting || sprinkles),
            extraFrosting: frosting,
            addSprinkles: sprinkles,
            name: try container.decodeIfPresent(String.self, forKey: .name) ?? "",
            streetAddress: try container.decodeIfPresent(String.self, forKey: .streetAddress) ?? "",
            city: try container.decodeIfPresent(String.self, forKey: .city) ?? "",
            zip: try container.decodeIfPresent(String.self, forKey: .zip) ?? ""
        )
    }

    /// Encodes every wire key, in the app's order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(quantity, forKey: .quantity)
        try container.encode(specialRequestEnabled, forKey: .specialRequestEnabled)
        try container.encode(extraFrosting, forKey: .extraFrosting)
        try container.encode(addSprinkles, forKey: .addSprinkles)
        try container.encode(name, forKey: .name)
        try container.encode(streetAddress, forKey: .streetAddress)
        try container.encode(city, forKey: .city)
        try container.encode(zip, forKey: .zip)
    }
}

extension Order {
    /// Decodes an order from JSON, with an error that names the key, or the line and column.
    ///
    /// - Throws: ``OrderDecodingError`` for malformed JSON, a body that is not an object, a
    ///   missing required key or a wrongly typed value.
    public static func decode(json data: some DataProtocol) throws(OrderDecodingError) -> Order {
        if let contiguous = data.withContiguousStorageIfAvailable({ OrderFastDecoder.decode($0) }),
            let order = contiguous
        {
            return order
        }
        let bytes = Data(data)
        // Strict JSON first: JSONDecoder accepts a trailing comma (`{"type":2,}`), jansson does
        // not, and says where the text went wrong. (What is JSON but beyond jansson's limits, a
        // `\u0000` in some other key say, is left to JSONDecoder.) Read once: a refusal below is
        // explained from the same reading.
        let document: Result<JSONValue, JSONSyntaxError>
        do throws(JSONSyntaxError) {
            document = .success(try JSONValue.parse(bytes))
        } catch {
            document = .failure(error)
        }
        if case .failure(let error) = document, !error.isBeyondLimits {
            throw OrderDecodingError.diagnose(bytes, document: document, decodingError: nil)
        }
        // The fast path refuses a repeated key; here it is an error of its own (see
        // JSONDuplicateKeys), before JSONDecoder would quietly keep the first value.
        if let key = JSONDuplicateKeys.first(in: bytes) {
            throw OrderDecodingError(kind: .duplicateKey(key))
        }
        do {
            return try JSONDecoder().decode(Order.self, from: bytes)
        } catch {
            throw OrderDecodingError.diagnose(bytes, document: document, decodingError: error)
        }
    }
}

extension Order {
    /// Reads an endpoint's answer the quick way when it is one flat JSON object: the order's
    /// keys and up to 16 others, all scalars, each key once, no escapes in strings. Returns the
    /// order and the other keys' values, or `nil` when the answer is anything else (read it in
    /// full then); what this accepts, ``decode(json:)`` decodes to the same order.
    public static func decodeFlat(json bytes: UnsafeBufferPointer<UInt8>) -> (
        order: Order, others: [(key: String, value: JSONScalar)]
    )? {
        OrderFastDecoder.decodeWithOthers(bytes).map { (order: $0.0, others: $0.1) }
    }
}

extension Order {
    /// Writes the nine wire keys, in the app's order, into an open object (the same keys as
    /// ``CodingKeys``, without `JSONEncoder`'s cost).
    public func writeFields(_ writer: inout JSONWriter) {
        writer.key(CodingKeys.type.rawValue)
        writer.integer(type)
        writer.key(CodingKeys.quantity.rawValue)
        writer.integer(quantity)
        writer.key(CodingKeys.specialRequestEnabled.rawValue)
        writer.bool(specialRequestEnabled)
        writer.key(CodingKeys.extraFrosting.rawValue)
        writer.bool(extraFrosting)
        writer.key(CodingKeys.addSprinkles.rawValue)
        writer.bool(addSprinkles)
        writer.key(CodingKeys.name.rawValue)
        writer.string(name)
        writer.key(CodingKeys.streetAddress.rawValue)
        writer.string(streetAddress)
        writer.key(CodingKeys.city.rawValue)
        writer.string(city)
        writer.key(CodingKeys.zip.rawValue)
        writer.string(zip)
    }

    /// The order as compact wire JSON: what the checkout sends, and what an Idempotency-Key's
    /// request is compared by.
    public var wireJSON: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writeFields(&writer)
        writer.endObject()
        return writer.bytes
    }
}
