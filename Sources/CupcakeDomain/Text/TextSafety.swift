/// Which characters are safe to show, and which show nothing: one rule for the order's fields
/// (every path into an order: the CLI, the server, `/api/quote` and so the page), for what the
/// CLI prints that came from elsewhere, and for the server's access log.
public enum TextSafety {
    /// Whether `scalar` must be written as a visible escape before it reaches a terminal or a log
    /// line: C0 and C1 controls and DEL (escape sequences, a forged line end), bidirectional
    /// formatting (marks, embeddings, overrides, isolates: they reorder what follows on the
    /// line), and the line and paragraph separators (a line end to some readers).
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || isBidiControl(scalar) || value == 0x2028
            || value == 0x2029
    }

    /// Whether `scalar` is a bidirectional formatting character: the marks (U+061C, U+200E,
    /// U+200F), embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value == 0x061C || value == 0x200E || value == 0x200F || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }

    /// Whether `scalar` is an override or isolate (U+202A–U+202E, U+2066–U+2069), which an order
    /// field may not hold at all: they make a name or an address read differently from what is
    /// stored (a "Trojan Source" reordering).
    public static func isBidiOverride(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
    }

    /// Whether `scalar` shows nothing: white space, a default-ignorable code point (zero-width
    /// space and joiners, word joiner, BOM, soft hyphen, variation selectors), another format
    /// character, a control, or one of the blank-looking letters and symbols Unicode does not
    /// class as space (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0; the Braille blank
    /// U+2800).
    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .format, .control, .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
        default: break
        }
        return properties.isWhitespace || properties.isDefaultIgnorableCodePoint
            || [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800].contains(scalar.value)
    }

    /// Whether `text` has no visible character (empty included).
    public static func isBlank(_ text: String) -> Bool {
        // Fast path: one visible ASCII character settles it.
        if text.utf8.contains(where: { $0 > 0x20 && $0 < 0x7F }) { return false }
        return text.unicodeScalars.allSatisfy(isInvisible)
    }

    /// `text` with every character of ``mustEscape(_:)`` written as a visible escape: `\x1b`
    /// below U+0100, `\u{202e}` above.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: mustEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if mustEscape(scalar) {
                result += escape(scalar)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The visible escape of one scalar: `\x1b` below U+0100, `\u{202e}` above.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return scalar.value < 0x100 ? "\\x" + (scalar.value < 0x10 ? "0" : "") + hex : "\\u{" + hex + "}"
    }
}
