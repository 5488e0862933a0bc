import CupcakeDomain
import Foundation
import Testing

@Suite struct OrderRulesTests {
    @Test func turningSpecialRequestsOffClearsBothExtras() {
        var order = Order(specialRequestEnabled: true, extraFrosting: true, addSprinkles: true)
        #expect(order.extraFrosting && order.addSprinkles)
        order.specialRequestEnabled = false
        #expect(!order.extraFrosting)
        #expect(!order.addSprinkles)
    }

    @Test func theInitializerAppliesTheResetRule() {
        let order = Order(specialRequestEnabled: false, extraFrosting: true, addSprinkles: true)
        #expect(!order.extraFrosting && !order.addSprinkles)
    }

    @Test func addressFieldsAreStoredTrimmed() {
        var order = Order(name: "  Taylor \n", streetAddress: "\t1 Main St ", city: " Nashville", zip: "37201 ")
        #expect(
            [order.name, order.streetAddress, order.city, order.zip] == ["Taylor", "1 Main St", "Nashville", "37201"])
        order.city = "  Memphis  "
        #expect(order.city == "Memphis")
        #expect(order.hasValidAddress)
    }

    @Test(arguments: [
        ("", "1 Main St", "Nashville", "37201"),
        ("Taylor", "   ", "Nashville", "37201"),
        ("Taylor", "1 Main St", "\n\t", "37201"),
        ("Taylor", "1 Main St", "Nashville", " "),
    ])
    func aBlankAddressFieldIsInvalid(name: String, street: String, city: String, zip: String) {
        let order = Order(name: name, streetAddress: street, city: city, zip: zip)
        #expect(!order.hasValidAddress)
        #expect(order.validate().count == 1)
    }

    struct RuleCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var order: Order
        var fields: [String]
    }

    static let valid = Order(
        type: 2, quantity: 5, name: "Taylor", streetAddress: "1 Main St", city: "Nashville", zip: "37201")

    static let ruleCases: [RuleCase] = {
        func with(_ change: (inout Order) -> Void) -> Order {
            var order = valid
            change(&order)
            return order
        }
        return [
            RuleCase(testDescription: "valid", order: valid, fields: []),
            RuleCase(testDescription: "type 7", order: with { $0.type = 7 }, fields: ["type"]),
            RuleCase(testDescription: "type -1", order: with { $0.type = -1 }, fields: ["type"]),
            RuleCase(testDescription: "quantity 2", order: with { $0.quantity = 2 }, fields: ["quantity"]),
            RuleCase(testDescription: "quantity 21", order: with { $0.quantity = 21 }, fields: ["quantity"]),
            RuleCase(testDescription: "quantity 3", order: with { $0.quantity = 3 }, fields: []),
            RuleCase(testDescription: "quantity 20", order: with { $0.quantity = 20 }, fields: []),
            RuleCase(testDescription: "blank name", order: with { $0.name = " " }, fields: ["name"]),
            RuleCase(
                testDescription: "101 chars", order: with { $0.city = String(repeating: "x", count: 101) },
                fields: ["city"]),
            RuleCase(
                testDescription: "100 chars", order: with { $0.city = String(repeating: "x", count: 100) }, fields: []),
            RuleCase(testDescription: "control char", order: with { $0.zip = "372\u{0}01" }, fields: ["zip"]),
            RuleCase(
                testDescription: "escape char", order: with { $0.streetAddress = "1 Main\u{1B}St" },
                fields: ["streetAddress"]),
            RuleCase(
                testDescription: "everything at once",
                order: Order(type: 9, quantity: 0),
                fields: ["type", "quantity", "name", "streetAddress", "city", "zip"]
            ),
        ]
    }()

    @Test(arguments: ruleCases)
    func validationReportsEveryBrokenRuleByWireKey(_ c: RuleCase) {
        let issues = c.order.validate()
        #expect(issues.map(\.field) == c.fields)
        #expect(issues.allSatisfy { !$0.rule.isEmpty })
    }

    @Test func pricingAloneNeedsNoAddress() {
        #expect(Order(type: 1, quantity: 4).validate(includingAddress: false).isEmpty)
        #expect(!Order(type: 1, quantity: 4).validate().isEmpty)
    }

    @Test(arguments: [
        ("2", CakeType.chocolate), ("chocolate", .chocolate), ("RAINBOW", .rainbow), ("Vanilla", .vanilla),
        ("1", .strawberry),
    ])
    func cakeTypesParseByIndexOrName(text: String, type: CakeType) {
        #expect(CakeType(argument: text) == type)
    }

    /// Every cake's own name and index parse back to it, with spaces around and in any case.
    @Test(arguments: CakeType.allCases)
    func everyCakeTypeParsesByItsNameAndIndex(type: CakeType) {
        for text in [
            type.name, type.name.uppercased(), " \(type.name.lowercased())\t", "\(type.rawValue)", " \(type.rawValue) ",
        ] {
            #expect(CakeType(argument: text) == type, "\(text)")
        }
    }

    @Test(arguments: ["4", "-1", "mint", "", "   ", "choco late"])
    func unknownCakeTypesDoNotParse(text: String) {
        #expect(CakeType(argument: text) == nil)
    }

    @Test func confirmationReadsLikeTheApp() {
        #expect(
            Order(type: 2, quantity: 5).confirmationMessage == "Your order for 5x chocolate cupcakes is on its way!")
    }
}
