/// What a JSON value is, for messages about a wrongly typed key: telling booleans, whole
/// numbers and other numbers apart, and a key that is absent from one that is null.
enum JSONValueKind {
    case absent
    case null
    case bool(Bool)
    case integer(Int)
    case number
    case string(String)
    case array
    case object

    init(_ value: JSONValue?) {
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
    var noun: String {
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
