/// Why text is not JSON, and where: jansson's reason ("invalid token near 'tru'") with the line
/// and the column (in characters, 1-based) where it stopped reading.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, counting characters, not bytes.
    public var column: Int
    /// The reason, e.g. "end of file expected near ','".
    public var reason: String

    /// Creates an error.
    public init(line: Int, column: Int, reason: String) {
        self.line = line
        self.column = column
        self.reason = reason
    }

    public var description: String { "line \(line), column \(column): \(reason)" }
}
