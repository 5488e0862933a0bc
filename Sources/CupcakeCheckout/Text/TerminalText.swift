/// Text from a server made safe to print on a terminal.
///
/// A server's answer (a problem's detail, a customer's name, a redirect's `Location`) may hold
/// escape sequences that move the cursor, rewrite the screen or the window title, or bidi
/// overrides that reorder what follows. Every text from the server that cupcake prints goes
/// through ``escaped(_:)``, which writes each such character as a visible escape.
public enum TerminalText {
    /// `text` with control characters (C0, DEL, C1) written as `\x1b`-style escapes and
    /// bidirectional formatting characters as `\u{202e}`; everything else unchanged.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result +=
                    scalar.value < 0x100
                    ? "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                    : "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// JSON text with the same characters written as `\u` escapes, so it stays valid JSON (in
    /// JSON they can only stand inside strings, where a serializer has already escaped the C0
    /// ones; the tab, line feed and carriage return between tokens stay as they are).
    public static func escapedJSON(_ text: String) -> String {
        let inJSON = { (scalar: Unicode.Scalar) in needsEscape(scalar) && ![0x09, 0x0A, 0x0D].contains(scalar.value) }
        guard text.unicodeScalars.contains(where: inJSON) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if inJSON(scalar) {
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value) || value == 0x200E || value == 0x200F || value == 0x061C
    }
}
