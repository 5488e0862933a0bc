import CupcakeDomain

/// Text from a server made safe to print on a terminal.
///
/// A server's answer (a problem's detail, a customer's name, an order's id, a redirect's
/// `Location`) may hold escape sequences that move the cursor, rewrite the screen or the window
/// title, or bidi overrides that reorder what follows. Every text from the server that cupcake
/// prints goes through ``escaped(_:)``, which writes each such character as a visible escape
/// (the set is ``TextSafety/mustEscape(_:)``, which the server's access log escapes too).
public enum TerminalText {
    /// `text` with control characters (C0, DEL, C1) written as `\x1b`-style escapes, and
    /// bidirectional formatting characters and line separators as `\u{202e}`; everything else
    /// unchanged.
    public static func escaped(_ text: String) -> String {
        TextSafety.escaped(text)
    }

    /// JSON text with the same characters written as `\u` escapes, so it stays valid JSON (in
    /// JSON they can only stand inside strings, where a serializer has already escaped the C0
    /// ones; the tab, line feed and carriage return between tokens stay as they are).
    public static func escapedJSON(_ text: String) -> String {
        let inJSON = { (scalar: Unicode.Scalar) in
            TextSafety.mustEscape(scalar) && ![0x09, 0x0A, 0x0D].contains(scalar.value)
        }
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
}
