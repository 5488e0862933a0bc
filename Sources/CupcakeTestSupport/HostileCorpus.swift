import CupcakeJSON
import Foundation

/// A deterministic corpus of hostile request bodies for the reliability suite: truncated and
/// byte-flipped JSON, wrong types in every field, huge numbers, deep nesting, duplicate keys,
/// invalid UTF-8, lone surrogates, control characters, megabyte strings and SQL-looking text.
public enum HostileCorpus {
    /// One body and what it is.
    public struct Case: Sendable, CustomStringConvertible {
        /// What kind of hostility.
        public var kind: String
        /// The bytes.
        public var body: Data
        public var description: String { "\(kind) (\(body.count) bytes)" }
    }

    /// A valid order, the starting point of most mutations.
    public static let valid =
        #"{"type":2,"quantity":5,"specialRequestEnabled":true,"extraFrosting":true,"addSprinkles":false,"name":"Taylor","streetAddress":"1 Main St","city":"Nashville","zip":"37201"}"#

    static let fields = [
        "type", "quantity", "specialRequestEnabled", "extraFrosting", "addSprinkles", "name", "streetAddress", "city",
        "zip",
    ]

    /// SQL-looking names that must be stored as plain text.
    public static let sqlNames = [
        "Robert'); DROP TABLE orders;--", "' OR '1'='1", "x\"; DELETE FROM idempotency_keys; --",
        "%_' UNION SELECT * FROM orders --",
    ]

    /// Every case, the same for the same seed.
    public static func cases(seed: UInt64 = 7) -> [Case] {
        var random = SplitMix64(seed: seed)
        var cases: [Case] = []
        func add(_ kind: String, _ text: String) { cases.append(Case(kind: kind, body: Data(text.utf8))) }
        func add(_ kind: String, _ bytes: [UInt8]) { cases.append(Case(kind: kind, body: Data(bytes))) }
        let validBytes = Array(valid.utf8)

        // Truncations at every 4th byte.
        for cut in stride(from: 0, to: validBytes.count, by: 4) {
            add("truncated at \(cut)", Array(validBytes.prefix(cut)))
        }
        // Byte flips: 120 seeded positions and values.
        for _ in 0..<120 {
            var bytes = validBytes
            let position = Int(random.next() % UInt64(bytes.count))
            bytes[position] = UInt8(truncatingIfNeeded: random.next())
            add("byte flip at \(position)", bytes)
        }
        // Wrong types, null, arrays and objects in every field.
        let replacements = [
            "null", "[]", "{}", "\"text\"", "true", "1.5", "-1", "[1,2]", #"{"a":1}"#, "\"\"", "1e400", "-0",
            "99999999999999999999999", "-9223372036854775809", "9223372036854775807",
        ]
        for field in fields {
            for replacement in replacements {
                add("\(field) = \(replacement)", replacing(field, with: replacement))
            }
        }
        // Quantities: negative, fractional, huge, zero.
        for quantity in ["-5", "0", "2", "3.0", "3.5", "21", "1e2", "18446744073709551616"] {
            add("quantity \(quantity)", replacing("quantity", with: quantity))
        }
        // Deep nesting, inside and outside the size limit.
        for depth in [1_000, 30_000, 100_000] {
            add("array nesting \(depth)", String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
            add(
                "object nesting \(depth)",
                String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth))
            add(
                "nesting in name \(depth)",
                replacing("name", with: String(repeating: "[", count: depth) + String(repeating: "]", count: depth)))
        }
        // Duplicate keys.
        add("duplicate type", valid.replacingOccurrences(of: #""type":2"#, with: #""type":2,"type":"x""#))
        add(
            "duplicate quantity", valid.replacingOccurrences(of: #""quantity":5"#, with: #""quantity":5,"quantity":50"#)
        )
        add(
            "duplicate name", valid.replacingOccurrences(of: #""name":"Taylor""#, with: #""name":"Taylor","name":null"#)
        )
        // Invalid UTF-8 and lone surrogates.
        for bad: [UInt8] in [
            [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xE2, 0x82],
        ] {
            var bytes = Array(#"{"type":1,"quantity":3,"name":""#.utf8) + bad
            bytes += Array(#"","streetAddress":"a","city":"b","zip":"c"}"#.utf8)
            add("invalid UTF-8 \(bad)", bytes)
        }
        for surrogate in [#"\ud800"#, #"\udfff"#, #"\ud800\u0041"#, #"\uDBFF"#] {
            add("lone surrogate \(surrogate)", replacing("name", with: "\"x\(surrogate)y\""))
        }
        // NUL and other control characters, raw and escaped.
        for code in [0, 1, 8, 0x1B, 0x7F] {
            add("escaped control \(code)", replacing("city", with: "\"a\\u\(String(format: "%04x", code))b\""))
            var bytes = Array(#"{"type":1,"quantity":3,"name":"a"#.utf8) + [UInt8(code)]
            bytes += Array(#"b","streetAddress":"a","city":"b","zip":"c"}"#.utf8)
            add("raw control \(code)", bytes)
        }
        add("NUL body", [0, 0, 0, 0])
        // Megabyte strings.
        add("megabyte name", replacing("name", with: "\"" + String(repeating: "x", count: 1 << 20) + "\""))
        add("megabyte whitespace", String(repeating: " ", count: 1 << 20) + valid)
        // SQL-looking text (valid orders: must be stored verbatim).
        for name in sqlNames {
            add("SQL-looking name", replacing("name", with: jsonString(name)))
        }
        add("SQL-looking zip", replacing("zip", with: jsonString("1; DROP TABLE orders")))
        // Not objects at all.
        for text in [
            "", " ", "null", "true", "42", "\"order\"", "[]", "[{}]", "{", "}", "{}", "{\"type\":}", "<xml/>",
            "type=2&quantity=5",
        ] {
            add("not an order: \(text.prefix(12))", text)
        }
        return cases
    }

    /// The valid order with one field's value replaced by raw JSON text.
    static func replacing(_ field: String, with json: String) -> String {
        guard let range = valid.range(of: "\"\(field)\":") else { return valid }
        let valueStart = range.upperBound
        var end = valueStart
        var inString = false
        while end < valid.endIndex {
            let character = valid[end]
            if character == "\"" { inString.toggle() }
            if !inString && (character == "," || character == "}") { break }
            end = valid.index(after: end)
        }
        return String(valid[..<valueStart]) + json + String(valid[end...])
    }

    /// `text` as a JSON string literal, quotes included.
    public static func jsonString(_ text: String) -> String {
        JSONValue.string(text).text()
    }
}
