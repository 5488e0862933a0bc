extension StringProtocol {
    /// The text without the spaces and tabs around it: a field value's optional whitespace
    /// (RFC 9110 §5.6.3), and nothing else. By bytes: Foundation's `trimmingCharacters(in:)`
    /// goes through `NSString` on every call, and trims Unicode spaces HTTP does not know.
    var trimmingOptionalWhitespace: String {
        let bytes = Array(utf8)
        let isText = { (byte: UInt8) in byte != 0x20 && byte != 0x09 }
        guard let first = bytes.firstIndex(where: isText), let last = bytes.lastIndex(where: isText) else {
            return ""
        }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
