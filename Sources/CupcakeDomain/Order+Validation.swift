extension Order {
    /// Every rule the order breaks, in wire-key order; empty when it is valid.
    ///
    /// - Parameter includingAddress: whether to check the delivery address too (pricing alone
    ///   needs none).
    public func validate(includingAddress: Bool = true) -> [ValidationIssue] {
        var issues: [ValidationIssue] = []
        if cakeType == nil {
            issues.append(
                ValidationIssue(
                    field: CodingKeys.type.rawValue, rule: "must be 0...3 (\(CakeType.choices)), got \(type)")
            )
        }
        if !Order.quantityRange.contains(quantity) {
            let range = Order.quantityRange
            issues.append(
                ValidationIssue(
                    field: CodingKeys.quantity.rawValue,
                    rule: "must be between \(range.lowerBound) and \(range.upperBound), got \(quantity)"
                )
            )
        }
        guard includingAddress else { return issues }
        let fields: [(CodingKeys, String)] = [
            (.name, name), (.streetAddress, streetAddress), (.city, city), (.zip, zip),
        ]
        for (key, value) in fields {
            if let rule = Order.addressRule(value) {
                issues.append(ValidationIssue(field: key.rawValue, rule: rule))
            }
        }
        return issues
    }

    /// The order itself when it breaks no rule.
    ///
    /// - Throws: ``OrderValidationError`` listing every broken rule.
    public func validated(includingAddress: Bool = true) throws(OrderValidationError) -> Order {
        let issues = validate(includingAddress: includingAddress)
        guard issues.isEmpty else { throw OrderValidationError(issues: issues) }
        return self
    }

    /// The rule an address field breaks, if any. Values arrive trimmed. Blank means no visible
    /// character (``TextSafety/isBlank(_:)``): a name of zero-width spaces or Hangul fillers is
    /// as blank as an empty one.
    static func addressRule(_ value: String) -> String? {
        // Fast path: printable ASCII only, short enough by bytes (so by characters too).
        let utf8 = value.utf8
        if !utf8.isEmpty, utf8.count <= Order.maximumFieldLength,
            utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), utf8.contains(where: { $0 != 0x20 })
        {
            return nil
        }
        if TextSafety.isBlank(value) {
            return "must not be blank"
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must not contain control characters"
        }
        if value.unicodeScalars.contains(where: TextSafety.isBidiOverride) {
            return "must not contain bidirectional override or isolate characters (U+202A-U+202E, U+2066-U+2069)"
        }
        let scalars = value.unicodeScalars.count
        if scalars > Order.maximumFieldLength {
            return "must be at most \(Order.maximumFieldLength) characters (Unicode scalars), got \(scalars)"
        }
        if utf8.count > Order.maximumFieldBytes {
            return "must be at most \(Order.maximumFieldBytes) bytes in UTF-8, got \(utf8.count)"
        }
        return nil
    }
}
