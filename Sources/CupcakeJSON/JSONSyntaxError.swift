/// Why jansson did not read a text, and where: its reason ("invalid token near 'tru'") with the
/// line and the column (in characters, 1-based) where it stopped reading.
///
/// Usually the text is not JSON. Sometimes it is, beyond one of jansson's own limits
/// (``isBeyondLimits``): a `\u0000` in a key, a whole number beyond 64 bits or a number beyond
/// a `Double`, nesting deeper than 2,048. Such text is refused by this reader only.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, counting characters, not bytes.
    public var column: Int
    /// The reason, e.g. "end of file expected near ','".
    public var reason: String
    /// Whether the text may be valid JSON that jansson does not represent (see above).
    public var isBeyondLimits: Bool

    /// Creates an error.
    public init(line: Int, column: Int, reason: String, isBeyondLimits: Bool = false) {
        self.line = line
        self.column = column
        self.reason = reason
        self.isBeyondLimits = isBeyondLimits
    }

    public var description: String { "line \(line), column \(column): \(reason)" }
}
