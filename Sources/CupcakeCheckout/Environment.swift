import Glibc

/// The environment variables a command reads: the process's own, looked up one by one when
/// asked, or a fixed set (a test's).
///
/// The process's variables are not copied into a `[String: String]` first: building that
/// dictionary at every start cost a one-shot command about 0.2 ms, most of it the Swift runtime
/// looking up `String: Hashable` among the binary's thousands of conformance records, for the
/// handful of variables a command reads. `getenv` is safe here because cupcake never sets a
/// variable of its own process.
public struct Environment: Sendable, ExpressibleByDictionaryLiteral {
    /// The fixed variables, or `nil` for the process's own.
    private let fixed: [(name: String, value: String)]?

    /// The process's own variables.
    public static let process = Environment(fixed: nil)

    private init(fixed: [(name: String, value: String)]?) {
        self.fixed = fixed
    }

    /// Exactly these variables.
    public init(_ variables: [String: String]) {
        fixed = variables.map { (name: $0.key, value: $0.value) }
    }

    /// Exactly these variables (a later one wins over an earlier one of the same name).
    public init(dictionaryLiteral elements: (String, String)...) {
        fixed = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The value of variable `name`, or `nil` when it is not set.
    public subscript(name: String) -> String? {
        guard let fixed else { return getenv(name).map { String(cString: $0) } }
        return fixed.last { $0.name == name }?.value
    }

    /// The value of variable `name` when it is set and not empty.
    public func nonEmpty(_ name: String) -> String? {
        guard let value = self[name], !value.isEmpty else { return nil }
        return value
    }
}
