/// One broken rule: the field's wire key and the rule it breaks.
public struct ValidationIssue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The field's wire key, e.g. "quantity".
    public var field: String
    /// The rule, e.g. "must be between 3 and 20".
    public var rule: String

    /// Creates an issue for a field's wire key.
    public init(field: String, rule: String) {
        self.field = field
        self.rule = rule
    }

    public var description: String { "\(field) \(rule)" }
}

/// An order that breaks one or more rules; carries every problem at once.
public struct OrderValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every broken rule, in wire-key order.
    public var issues: [ValidationIssue]

    /// Creates an error from the issues found.
    public init(issues: [ValidationIssue]) {
        self.issues = issues
    }

    public var description: String {
        "invalid order: " + issues.map(\.description).joined(separator: "; ")
    }
}
