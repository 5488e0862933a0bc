extension JSONValue {
    /// The value as JSON text: compact, or indented by two spaces per level; object members in
    /// their order, or sorted by key.
    public func text(pretty: Bool = false, sortedKeys: Bool = false) -> String {
        var bytes: [UInt8] = []
        write(to: &bytes, pretty: pretty, sortedKeys: sortedKeys, indent: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func write(to bytes: inout [UInt8], pretty: Bool, sortedKeys: Bool, indent: Int) {
        switch self {
        case .null: bytes += "null".utf8
        case .bool(let value): bytes += (value ? "true" : "false").utf8
        case .integer(let number): bytes += String(number).utf8
        case .number(let number): bytes += (number.isFinite ? "\(number)" : "null").utf8
        case .string(let text): JSONWriter.appendQuoted(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.newline(&bytes, pretty, indent + 1)
                element.write(to: &bytes, pretty: pretty, sortedKeys: sortedKeys, indent: indent + 1)
            }
            if !elements.isEmpty { Self.newline(&bytes, pretty, indent) }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let ordered = sortedKeys ? members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : members
            for (index, member) in ordered.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.newline(&bytes, pretty, indent + 1)
                JSONWriter.appendQuoted(member.key, to: &bytes)
                bytes += (pretty ? ": " : ":").utf8
                member.value.write(to: &bytes, pretty: pretty, sortedKeys: sortedKeys, indent: indent + 1)
            }
            if !members.isEmpty { Self.newline(&bytes, pretty, indent) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ bytes: inout [UInt8], _ pretty: Bool, _ indent: Int) {
        guard pretty else { return }
        bytes.append(0x0A)
        bytes += repeatElement(UInt8(ascii: " "), count: indent * 2)
    }
}
