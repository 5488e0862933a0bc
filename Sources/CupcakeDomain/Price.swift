/// What an order costs, with a line for each price rule that added something.
public struct Price: Sendable, Hashable, Codable {
    /// One rule's contribution, e.g. "5 × cake at $2.00" for 1000 cents.
    public struct LineItem: Sendable, Hashable, Codable {
        /// What the rule added, in words.
        public var description: String
        /// How much it added, in cents.
        public var cents: Int

        /// Creates a line item.
        public init(description: String, cents: Int) {
            self.description = description
            self.cents = cents
        }
    }

    /// The lines, in the order the rules apply.
    public var lineItems: [LineItem]

    /// Creates a price from its line items.
    public init(lineItems: [LineItem]) {
        self.lineItems = lineItems
    }

    /// The total in cents: the sum of the lines.
    public var totalCents: Int { lineItems.reduce(0) { $0 + $1.cents } }

    /// The total as money.
    public var total: Money { Money(cents: totalCents) }
}
