import CupcakeDomain
import Testing

@Suite struct TextSafetyTests {
    struct BlankCase: Sendable, CustomTestStringConvertible {
        var text: String
        var blank: Bool
        var testDescription: String {
            "\(text.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " "))"
                + " → \(blank ? "blank" : "visible")"
        }
    }

    /// Everything that shows nothing is blank: white space, default-ignorable code points, other
    /// format characters, the Hangul fillers and the Braille blank. One visible character is not.
    static let blankCases: [BlankCase] = [
        BlankCase(text: "", blank: true),
        BlankCase(text: "   ", blank: true),
        BlankCase(text: "\u{200B}", blank: true),  // zero-width space
        BlankCase(text: "\u{200C}\u{200D}", blank: true),  // zero-width non-joiner, joiner
        BlankCase(text: "\u{2060}", blank: true),  // word joiner
        BlankCase(text: "\u{FEFF}", blank: true),  // BOM
        BlankCase(text: "\u{00AD}", blank: true),  // soft hyphen
        BlankCase(text: "\u{115F}", blank: true),  // Hangul choseong filler
        BlankCase(text: "\u{1160}", blank: true),  // Hangul jungseong filler
        BlankCase(text: "\u{3164}", blank: true),  // Hangul filler
        BlankCase(text: "\u{FFA0}", blank: true),  // halfwidth Hangul filler
        BlankCase(text: "\u{2800}", blank: true),  // Braille blank
        BlankCase(text: "\u{FE0F}", blank: true),  // variation selector
        BlankCase(text: "\u{3000}\u{00A0}", blank: true),  // ideographic space, no-break space
        BlankCase(text: "\u{202E}\u{2066}", blank: true),  // overrides show nothing either
        BlankCase(text: "\u{200B}a", blank: false),
        BlankCase(text: "Zoë", blank: false),
        BlankCase(text: "東京", blank: false),
        BlankCase(text: "\u{1F9C1}", blank: false),  // cupcake
        BlankCase(text: "-", blank: false),
    ]

    @Test(arguments: blankCases)
    func blankMeansNoVisibleCharacter(_ item: BlankCase) {
        #expect(TextSafety.isBlank(item.text) == item.blank)
    }

    @Test(arguments: blankCases)
    func anInvisibleAddressFieldIsBlankOnEveryPath(_ item: BlankCase) {
        let order = Order(
            type: 1, quantity: 3, name: item.text, streetAddress: "1 Main St", city: "Austin", zip: "73301")
        #expect(order.hasValidAddress == !item.blank)
        let nameRule = order.validate().first { $0.field == "name" }?.rule
        if item.blank {
            #expect(nameRule == "must not be blank")
        }
    }

    @Test(arguments: [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
    ])
    func bidiOverridesAndIsolatesAreRefusedInEveryField(_ control: String) {
        let order = Order(
            type: 1, quantity: 3, name: "Ann\(control)Lee", streetAddress: "\(control)1 Main St", city: "Austin",
            zip: "737\(control)01")
        let fields = order.validate().filter { $0.rule.contains("bidirectional") }.map(\.field)
        #expect(fields == ["name", "streetAddress", "zip"])
    }

    struct EscapeCase: Sendable, CustomTestStringConvertible {
        var text: String
        var escaped: String
        var testDescription: String { escaped }
    }

    /// C0, DEL, C1, bidi formatting and line separators become visible escapes; the rest stays.
    static let escapeCases: [EscapeCase] = [
        EscapeCase(text: "1\u{1B}]0;PWNED\u{07}\u{1B}[31m", escaped: "1\\x1b]0;PWNED\\x07\\x1b[31m"),
        EscapeCase(text: "a\u{7F}b", escaped: "a\\x7fb"),
        EscapeCase(text: "\u{9B}31m", escaped: "\\x9b31m"),
        EscapeCase(text: "\u{85}", escaped: "\\x85"),
        EscapeCase(text: "x\u{2028}y\u{2029}", escaped: "x\\u{2028}y\\u{2029}"),
        EscapeCase(text: "\u{202E}txt.exe", escaped: "\\u{202e}txt.exe"),
        EscapeCase(text: "\u{2066}\u{2069}", escaped: "\\u{2066}\\u{2069}"),
        EscapeCase(text: "\u{200E}\u{200F}\u{061C}", escaped: "\\u{200e}\\u{200f}\\u{61c}"),
        EscapeCase(text: "line\nnext\ttab\r", escaped: "line\\x0anext\\x09tab\\x0d"),
        EscapeCase(text: "Zoë 東京 \u{1F9C1}", escaped: "Zoë 東京 \u{1F9C1}"),
    ]

    @Test(arguments: escapeCases)
    func unsafeCharactersAreEscaped(_ item: EscapeCase) {
        #expect(TextSafety.escaped(item.text) == item.escaped)
    }
}
