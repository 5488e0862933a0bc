/// One JSON value that is not an array or an object, as the fast order reader accepts it: a
/// whole number that fits in `Int`, a boolean, null, or a string without escapes.
public enum JSONScalar: Sendable, Equatable {
    /// A whole number (no fraction, no exponent).
    case integer(Int)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// A string.
    case string(String)
}
