import CupcakeJSON
import FoundationEssentials

/// Why a JSON body is not an order: malformed JSON (with line and column), a body that is not
/// an object, or keys that are missing or wrongly typed (each named by its wire key).
public struct OrderDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One key's problem, e.g. `quantity` "must be a whole number, found a fractional number".
    public struct KeyProblem: Sendable, Equatable, CustomStringConvertible {
        /// The wire key.
        public var key: String
        /// What is wrong with it.
        public var problem: String

        public var description: String { "\(key) \(problem)" }
    }

    /// The kind of failure.
    public enum Kind: Sendable, Equatable {
        /// The bytes are not JSON; line and column are 1-based.
        case malformed(line: Int, column: Int, reason: String)
        /// The bytes are not JSON and no position is known (e.g. empty or not UTF-8).
        case unreadable(reason: String)
        /// Valid JSON, but not an object.
        case notAnObject(found: String)
        /// An object with the same key twice (JSON leaves its meaning undefined).
        case duplicateKey(String)
        /// An object whose keys break the wire format.
        case keys([KeyProblem])
    }

    /// The kind of failure, with its context.
    public var kind: Kind

    /// Whether the body was not JSON at all (as opposed to JSON that is not an order).
    public var isMalformed: Bool {
        switch kind {
        case .malformed, .unreadable, .notAnObject, .duplicateKey: true
        case .keys: false
        }
    }

    public var description: String {
        switch kind {
        case .malformed(let line, let column, let reason):
            "malformed JSON at line \(line), column \(column): \(reason)"
        case .unreadable(let reason):
            "malformed JSON: \(reason)"
        case .notAnObject(let found):
            "an order must be a JSON object, found \(found)"
        case .duplicateKey(let key):
            "the key '\(key)' appears twice in one object"
        case .keys(let problems):
            problems.map(\.description).joined(separator: "; ")
        }
    }

    /// Explains why `data` did not decode as an order, from jansson's reading of it (`document`):
    /// the position of a syntax error, or the keys that are wrong.
    static func diagnose(
        _ data: Data, document: Result<JSONValue, JSONSyntaxError>, decodingError: (any Error)?
    ) -> OrderDecodingError {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return OrderDecodingError(kind: .unreadable(reason: "the input is empty"))
        }
        let parsed: JSONValue
        switch document {
        case .success(let value): parsed = value
        case .failure(let error):
            // JSON that jansson does not represent, which the decoder refused for a key: that key.
            if error.isBeyondLimits, let problem = keyProblem(decodingError) {
                return OrderDecodingError(kind: .keys([problem]))
            }
            return OrderDecodingError(
                kind: .malformed(line: error.line, column: error.column, reason: sentence(error.reason)))
        }
        guard case .object = parsed else {
            return OrderDecodingError(kind: .notAnObject(found: JSONValueKind(parsed).noun))
        }
        let problems = keyProblems(parsed)
        if problems.isEmpty {
            // jansson read it and every key looks right, yet the decoder refused it.
            let reason = (decodingError as? DecodingError).map(Self.describe) ?? "the order could not be read"
            return OrderDecodingError(kind: .unreadable(reason: reason))
        }
        return OrderDecodingError(kind: .keys(problems))
    }

    private static func keyProblems(_ object: JSONValue) -> [KeyProblem] {
        typealias Key = Order.CodingKeys
        var problems: [KeyProblem] = []
        for key in Key.allCases {
            let kind = JSONValueKind(object[key.rawValue])
            let expected: String
            switch (key, kind) {
            case (.type, .absent), (.quantity, .absent), (.type, .null), (.quantity, .null):
                problems.append(KeyProblem(key: key.rawValue, problem: "is required"))
                continue
            case (_, .absent), (_, .null), (.type, .integer), (.quantity, .integer):
                continue
            case (.type, _), (.quantity, _):
                expected = "a whole number"
            case (.specialRequestEnabled, .bool), (.extraFrosting, .bool), (.addSprinkles, .bool):
                continue
            case (.specialRequestEnabled, _), (.extraFrosting, _), (.addSprinkles, _):
                expected = "true or false"
            case (_, .string):
                continue
            default:
                expected = "a string"
            }
            problems.append(KeyProblem(key: key.rawValue, problem: "must be \(expected), found \(kind.noun)"))
        }
        return problems
    }

    private static func sentence(_ text: String) -> String {
        var text = Substring(text)
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        guard let first = text.first else { return String(text) }
        return first.lowercased() + text.dropFirst()
    }

    /// The key the decoder's error names, with its problem in the decoder's words.
    private static func keyProblem(_ error: (any Error)?) -> KeyProblem? {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?:
            KeyProblem(key: key.stringValue, problem: "is required")
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?,
            .dataCorrupted(let context)?
        where !context.codingPath.isEmpty:
            KeyProblem(
                key: context.codingPath.map(\.stringValue).joined(separator: "."),
                problem: sentence(context.debugDescription))
        default: nil
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .keyNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? sentence(context.debugDescription) : "\(path): \(sentence(context.debugDescription))"
        @unknown default:
            return "the order could not be read"
        }
    }
}
