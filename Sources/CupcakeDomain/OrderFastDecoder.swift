/// A strict, allocation-light reader for the common shape of an order body: one flat JSON
/// object of integers, booleans, nulls and plain strings. It accepts only a subset of JSON whose
/// meaning is beyond doubt and returns `nil` for anything else (escapes it does not handle,
/// nesting, fractions, duplicate keys, bad UTF-8, any syntax error), and then `JSONDecoder`
/// decides, with its full error reporting. A differential test and the fuzz target check that
/// whatever this accepts, `JSONDecoder` decodes to the same order.
struct OrderFastDecoder {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// The keys besides the order's, with their values, in the order read.
    private(set) var others: [(key: String, value: JSONScalar)] = []

    /// Decodes `data`, or returns `nil` to ask for the full decoder.
    static func decode(_ data: UnsafeBufferPointer<UInt8>) -> Order? {
        var decoder = OrderFastDecoder(bytes: data)
        return decoder.object()
    }

    /// Decodes `data` and returns the other keys' values too (an endpoint's answer: the order
    /// with its id and the rest), or `nil` to ask for a full reader.
    static func decodeWithOthers(_ data: UnsafeBufferPointer<UInt8>) -> (Order, [(key: String, value: JSONScalar)])? {
        var decoder = OrderFastDecoder(bytes: data)
        guard let order = decoder.object() else { return nil }
        return (order, decoder.others)
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private typealias Value = JSONScalar

    private mutating func object() -> Order? {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var type: Int?
        var quantity: Int?
        var special: Bool??
        var frosting: Bool??
        var sprinkles: Bool??
        var name: String??
        var street: String??
        var city: String??
        var zip: String??
        // Other keys (an answer's id, createdAt, ...) are kept aside, each once: a repeat, or
        // more than 16 of them, goes to the full decoder. (An array and not a set: no type for
        // the Swift runtime to look up on a one-shot command's first order.)
        others = []
        skipSpace()
        if !take(UInt8(ascii: "}")) {
            while true {
                skipSpace()
                guard let key = rawKey() else { return nil }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                guard let value = value() else { return nil }
                // Each known key once; a repeat of any key goes to the full decoder.
                switch key {
                case "type":
                    guard type == nil, case .integer(let number) = value else { return nil }
                    type = number
                case "quantity":
                    guard quantity == nil, case .integer(let number) = value else { return nil }
                    quantity = number
                case "specialRequestEnabled":
                    guard special == nil, let flag = Self.optionalBool(value) else { return nil }
                    special = .some(flag)
                case "extraFrosting":
                    guard frosting == nil, let flag = Self.optionalBool(value) else { return nil }
                    frosting = .some(flag)
                case "addSprinkles":
                    guard sprinkles == nil, let flag = Self.optionalBool(value) else { return nil }
                    sprinkles = .some(flag)
                case "name":
                    guard name == nil, let text = Self.optionalString(value) else { return nil }
                    name = .some(text)
                case "streetAddress":
                    guard street == nil, let text = Self.optionalString(value) else { return nil }
                    street = .some(text)
                case "city":
                    guard city == nil, let text = Self.optionalString(value) else { return nil }
                    city = .some(text)
                case "zip":
                    guard zip == nil, let text = Self.optionalString(value) else { return nil }
                    zip = .some(text)
                default:
                    guard others.count < 16, !others.contains(where: { $0.key == key }) else { return nil }
                    others.append((key, value))
                }
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        skipSpace()
        guard index == bytes.count, let type, let quantity else { return nil }
        let frostingValue = (frosting ?? nil) ?? false
        let sprinklesValue = (sprinkles ?? nil) ?? false
        return Order(
            type: type,
            quantity: quantity,
            specialRequestEnabled: (special ?? nil) ?? (frostingValue || sprinklesValue),
            extraFrosting: frostingValue,
            addSprinkles: sprinklesValue,
            name: (name ?? nil) ?? "",
            streetAddress: (street ?? nil) ?? "",
            city: (city ?? nil) ?? "",
            zip: (zip ?? nil) ?? ""
        )
    }

    /// `.some(nil)` for null, `.some(flag)` for a boolean, `nil` for anything else.
    private static func optionalBool(_ value: Value) -> Bool?? {
        switch value {
        case .bool(let flag): .some(flag)
        case .null: .some(nil)
        default: nil
        }
    }

    private static func optionalString(_ value: Value) -> String?? {
        switch value {
        case .string(let text): .some(text)
        case .null: .some(nil)
        default: nil
        }
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func rawKey() -> String? {
        guard case .string(let key)? = string() else { return nil }
        return key
    }

    private mutating func value() -> Value? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString, _ value: Value) -> Value? {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return nil }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            return nil
        }
        index += count
        return value
    }

    /// `-?(0|[1-9][0-9]*)` that fits in Int, not followed by a fraction or exponent.
    private mutating func integer() -> Value? {
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var magnitude: Int = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int(bytes[index] - UInt8(ascii: "0"))
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, overflow2) = times.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            magnitude = plus
            index += 1
        }
        let digits = index - start
        guard digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")) else { return nil }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            return nil
        }
        return .integer(negative ? -magnitude : magnitude)
    }

    /// A string without escapes, valid UTF-8, no raw control characters.
    private mutating func string() -> Value? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if ascii {
                    return .string(String(decoding: slice, as: UTF8.self))
                }
                guard let text = String(validating: slice, as: UTF8.self) else { return nil }
                return .string(text)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        return nil
    }
}
