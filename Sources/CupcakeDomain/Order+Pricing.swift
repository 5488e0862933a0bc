extension Order {
    /// The price of one cake.
    public static let cakePrice = Money(dollars: 2)
    /// The surcharge per type index, charged once per order (Chocolate, index 2, adds $1.00).
    public static let typeSurchargeStep = Money(cents: 50)
    /// Extra frosting, per cake, while special requests are on.
    public static let frostingPrice = Money(dollars: 1)
    /// Sprinkles, per cake, while special requests are on.
    public static let sprinklesPrice = Money(cents: 50)

    /// The order's cost in cents, by the app's rules: $2.00 a cake, plus type × $0.50 once,
    /// plus $1.00 a cake for extra frosting and $0.50 a cake for sprinkles.
    ///
    /// Only meaningful for an order whose type and quantity are valid; callers validate first.
    public var costCents: Int {
        var cents = Order.cakePrice.cents * quantity + Order.typeSurchargeStep.cents * type
        if specialRequestEnabled {
            if extraFrosting { cents += Order.frostingPrice.cents * quantity }
            if addSprinkles { cents += Order.sprinklesPrice.cents * quantity }
        }
        return cents
    }

    /// The price with a line for each rule that added something.
    ///
    /// - Throws: ``OrderValidationError`` when the type or quantity is out of range, so an
    ///   invalid order is never priced as valid. The address is not checked.
    public func price() throws(OrderValidationError) -> Price {
        let order = try validated(includingAddress: false)
        let kind = order.cakeType?.name ?? "Type \(type)"
        var lines = [
            Price.LineItem(
                description: "\(quantity) × \(kind.lowercased()) cake at \(Order.cakePrice)",
                cents: (Order.cakePrice * quantity).cents
            )
        ]
        if type > 0 {
            lines.append(
                Price.LineItem(
                    description: "\(kind) surcharge (\(type) × \(Order.typeSurchargeStep), once)",
                    cents: (Order.typeSurchargeStep * type).cents
                )
            )
        }
        if specialRequestEnabled && extraFrosting {
            lines.append(
                Price.LineItem(
                    description: "Extra frosting, \(quantity) × \(Order.frostingPrice)",
                    cents: (Order.frostingPrice * quantity).cents
                )
            )
        }
        if specialRequestEnabled && addSprinkles {
            lines.append(
                Price.LineItem(
                    description: "Sprinkles, \(quantity) × \(Order.sprinklesPrice)",
                    cents: (Order.sprinklesPrice * quantity).cents
                )
            )
        }
        return Price(lineItems: lines)
    }
}
