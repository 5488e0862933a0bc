/// One JSON document, read whole: the client's config file and the endpoint's answers, and the
/// diagnosis of a body that is not an order. Read by jansson (``parse(_:)``), which tells
/// booleans, whole numbers and other numbers apart and says where a syntax error is.
///
/// The order itself has a quicker reader (`OrderFastDecoder`) and `JSONDecoder`; this is for
/// documents whose shape is not fixed.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without a fraction or an exponent.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object's members, in the order they were written (a key written twice keeps its last
    /// value, once).
    case object([Member])

    /// One key and its value in an object.
    public struct Member: Sendable, Equatable {
        /// The key.
        public var key: String
        /// Its value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value of `key` when this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The members when this is an object.
    public var members: [Member]? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The elements when this is an array.
    public var elements: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// The text when this is a string.
    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The number when this is a whole number that fits in `Int`.
    public var integer: Int? {
        if case .integer(let number) = self { Int(exactly: number) } else { nil }
    }

    /// The number, whole or not (booleans are not numbers).
    public var number: Double? {
        switch self {
        case .integer(let number): Double(number)
        case .number(let number): number
        default: nil
        }
    }

    /// The number when it is whole and fits in `Int`, however it was written (`3` or `3.0`).
    public var wholeNumber: Int? {
        switch self {
        case .integer(let number): Int(exactly: number)
        case .number(let number): Int(exactly: number)
        default: nil
        }
    }

    /// The value when this is `true` or `false`.
    public var bool: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }
}
