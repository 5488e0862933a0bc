/// What a JSON value is, for messages about a wrongly typed key: telling booleans, whole
/// numbers and other numbers apart, and a key that is absent from one that is null.
public enum JSONValueKind: Sendable, Equatable {
    /// No value: the key is not there.
    case absent
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number that fits in `Int`.
    case integer(Int)
    /// Any other number.
    case number
    /// A string.
    case string(String)
    /// An array.
    case array
    /// An object.
    case object

    /// The kind of `value` (nil: absent).
    public init(_ value: JSONValue?) {
        switch value {
        case .none: self = .absent
        case .null?: self = .null
        case .bool(let flag)?: self = .bool(flag)
        case .integer(let number)?: self = Int(exactly: number).map { .integer($0) } ?? .number
        case .number?: self = .number
        case .string(let text)?: self = .string(text)
        case .array?: self = .array
        case .object?: self = .object
        }
    }

    /// The value's kind with an article, for messages: "a string", "an array".
    public var noun: String {
        switch self {
        case .absent: "nothing"
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "a whole number"
        case .number: "a fractional or out-of-range number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
