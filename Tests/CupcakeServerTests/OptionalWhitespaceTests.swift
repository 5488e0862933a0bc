import Testing

@testable import CupcakeServer

@Suite struct OptionalWhitespaceTests {
    /// Spaces and tabs around a field value go; everything inside stays, and so does any other
    /// whitespace (a no-break space is not HTTP's optional whitespace).
    @Test(arguments: [
        ("chunked", "chunked"),
        ("  gzip ,", "gzip ,"),
        ("\t 203.0.113.7 \t", "203.0.113.7"),
        ("a b", "a b"),
        ("", ""),
        (" \t ", ""),
        ("key\u{A0}", "key\u{A0}"),
        (" caf\u{E9} ", "caf\u{E9}"),
    ])
    func spacesAndTabsAroundAValueGo(_ value: String, _ expected: String) {
        #expect(value.trimmingOptionalWhitespace == expected)
        #expect(value[...].trimmingOptionalWhitespace == expected)
    }
}
