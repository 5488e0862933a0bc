import Foundation

/// What a value from `JSONSerialization` is, telling booleans, whole numbers and other numbers
/// apart (on Linux they all arrive as `NSNumber`).
enum JSONValueKind {
    case absent
    case null
    case bool(Bool)
    case integer(Int)
    case number
    case string(String)
    case array
    case object

    init(_ value: Any?) {
        switch value {
        case .none: self = .absent
        case is NSNull: self = .null
        case let text as String: self = .string(text)
        case is [Any]: self = .array
        case is [String: Any]: self = .object
        case let number as NSNumber:
            let code = String(cString: number.objCType)
            if code == "c" || code == "B" {
                self = .bool(number.boolValue)
            } else if ["i", "q", "l", "s"].contains(code) {
                self = .integer(number.intValue)
            } else {
                self = .number
            }
        default: self = .number
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
