/// Writes compact JSON straight into bytes, in the order it is told. Used on the hot paths (the
/// server's answers, the checkout's request body), where `JSONEncoder` cost more than the whole
/// rest of the work.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// Creates an empty writer.
    public init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    /// Writes `beginObject`.
    public mutating func beginObject() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Writes `endObject`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `beginArray`.
    public mutating func beginArray() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Writes `endArray`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes a key; the next value belongs to it.
    public mutating func key(_ name: String) {
        separator()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a string, escaped.
    public mutating func string(_ value: String) {
        separator()
        appendQuoted(value)
        needsComma = true
    }

    /// Writes an integer.
    public mutating func integer(_ value: some BinaryInteger) {
        separator()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    /// Writes one value whose JSON text `write` appends itself (it must be a whole value, such
    /// as a quoted string that needs no escapes), without making a string first.
    public mutating func value(writing write: (inout [UInt8]) -> Void) {
        separator()
        write(&bytes)
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        separator()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separator()
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
        needsComma = true
    }

    private mutating func separator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ text: String) {
        Self.appendQuoted(text, to: &bytes)
    }

    /// Appends `text` as a JSON string literal (quotes, and escapes where JSON needs them).
    static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Fast path: scan the string's own bytes and copy them at once when nothing needs escaping
        // (almost always; this runs for every field of every answer).
        let copied =
            text.utf8.withContiguousStorageIfAvailable { buffer -> Bool in
                for byte in buffer where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F {
                    return false
                }
                bytes.append(contentsOf: buffer)
                return true
            } ?? false
        if copied {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
            case 0x0A: bytes.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48])
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
