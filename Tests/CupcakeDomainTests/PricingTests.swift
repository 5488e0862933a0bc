import CupcakeDomain
import Testing

@Suite struct PricingTests {
    struct PriceCase: Sendable, CustomTestStringConvertible {
        var type: CakeType
        var quantity: Int
        var frosting: Bool
        var sprinkles: Bool

        var testDescription: String { "\(quantity)x \(type) frosting:\(frosting) sprinkles:\(sprinkles)" }

        /// The app's rule written out longhand, in cents: 200/cake, 50 × type, 100 and 50 per cake.
        var expectedCents: Int {
            quantity * 200 + type.rawValue * 50 + (frosting ? quantity * 100 : 0) + (sprinkles ? quantity * 50 : 0)
        }
    }

    static let cases: [PriceCase] = CakeType.allCases.flatMap { type in
        [3, 4, 7, 12, 19, 20].flatMap { quantity in
            [(false, false), (true, false), (false, true), (true, true)].map {
                PriceCase(type: type, quantity: quantity, frosting: $0.0, sprinkles: $0.1)
            }
        }
    }

    @Test(arguments: cases)
    func priceFollowsTheAppRules(_ c: PriceCase) throws {
        let order = Order(
            type: c.type.rawValue,
            quantity: c.quantity,
            specialRequestEnabled: c.frosting || c.sprinkles,
            extraFrosting: c.frosting,
            addSprinkles: c.sprinkles
        )
        let price = try order.price()
        #expect(price.totalCents == c.expectedCents)
        #expect(order.costCents == c.expectedCents)
        #expect(price.lineItems.allSatisfy { $0.cents > 0 })
    }

    @Test(arguments: [
        (Order(type: 2, quantity: 5, specialRequestEnabled: true, extraFrosting: true), 1600, "$16.00"),
        (
            Order(type: 3, quantity: 3, specialRequestEnabled: true, extraFrosting: true, addSprinkles: true), 1200,
            "$12.00"
        ),
        (Order(type: 0, quantity: 3), 600, "$6.00"),
        (Order(type: 1, quantity: 3, specialRequestEnabled: true, addSprinkles: true), 800, "$8.00"),
    ])
    func knownExamples(order: Order, cents: Int, text: String) throws {
        let price = try order.price()
        #expect(price.totalCents == cents)
        #expect(price.total.formatted == text)
    }

    @Test func extrasAreFreeWhileSpecialRequestsAreOff() throws {
        var order = Order(type: 0, quantity: 4, specialRequestEnabled: true, extraFrosting: true, addSprinkles: true)
        #expect(try order.price().totalCents == 1400)
        order.specialRequestEnabled = false
        #expect(try order.price().totalCents == 800)
    }

    @Test func lineItemsSayWhatEachRuleAdded() throws {
        let order = Order(type: 2, quantity: 5, specialRequestEnabled: true, extraFrosting: true)
        let lines = try order.price().lineItems
        #expect(lines.map(\.cents) == [1000, 100, 500])
        #expect(lines[0].description.contains("5 × chocolate cake"))
        #expect(lines[1].description.contains("Chocolate surcharge"))
        #expect(lines[2].description.contains("Extra frosting"))
    }

    @Test(arguments: [Order(type: 7, quantity: 5), Order(type: 0, quantity: 2), Order(type: -1, quantity: 21)])
    func anInvalidOrderIsNeverPriced(_ order: Order) {
        #expect(throws: OrderValidationError.self) { try order.price() }
    }

    @Test(arguments: [
        (0, "$0.00"), (5, "$0.05"), (1600, "$16.00"), (123_456, "$1,234.56"), (-50, "-$0.50"),
        (100_000_000, "$1,000,000.00"),
    ])
    func moneyFormatsAsUSDollars(cents: Int, text: String) {
        #expect(Money(cents: cents).formatted == text)
    }
}
