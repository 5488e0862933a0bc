/// What an order would cost and which rules it breaks, without placing it. The storefront asks
/// for one as the customer changes the order (`POST /api/quote`), so prices, line items and
/// validation are written once, here, for the page and the CLI alike.
public struct Quote: Sendable, Hashable, Encodable {
    /// The order as it would be placed: the reset rule applied, the address trimmed.
    public var order: Order
    /// A line for each price rule that added something; empty when the type or quantity is out
    /// of range (such an order has no price).
    public var lineItems: [Price.LineItem]
    /// The total in cents, or `nil` when the order has no price.
    public var costCents: Int?
    /// The total as the app shows it, "$16.00", or `nil` when the order has no price.
    public var total: String?
    /// Always "USD".
    public var currency = "USD"
    /// Every rule the order breaks, the address included; empty when it may be placed.
    public var errors: [ValidationIssue]
    /// Whether the order may be placed as it is.
    public var valid: Bool

    /// Prices and checks `order`.
    public init(_ order: Order) {
        self.order = order
        errors = order.validate()
        valid = errors.isEmpty
        if let price = try? order.price() {
            lineItems = price.lineItems
            costCents = price.totalCents
            total = price.total.description
        } else {
            lineItems = []
        }
    }

    /// A line item as the quote shows it: also its amount as text ("$10.00").
    private struct Line: Encodable {
        var description: String
        var cents: Int
        var amount: String
        init(_ item: Price.LineItem) {
            description = item.description
            cents = item.cents
            amount = Money(cents: item.cents).description
        }
    }

    private enum CodingKeys: String, CodingKey {
        case order, lineItems, costCents, total, currency, errors, valid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(order, forKey: .order)
        try container.encode(lineItems.map(Line.init), forKey: .lineItems)
        // Explicit nulls: the page tells "no price" from a missing field.
        try container.encode(costCents, forKey: .costCents)
        try container.encode(total, forKey: .total)
        try container.encode(currency, forKey: .currency)
        try container.encode(errors, forKey: .errors)
        try container.encode(valid, forKey: .valid)
    }
}
