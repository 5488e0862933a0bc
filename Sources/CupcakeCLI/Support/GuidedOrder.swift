import CupcakeCheckout
import CupcakeDomain

/// `cupcake order` at a terminal with no order options: asks what the app's three screens ask
/// (the cake, how many, special requests, then the address, prefilled from the saved one), on
/// standard error, one question at a time. A wrong answer is explained and asked again; the end
/// of input (Ctrl-D), or an empty answer where there is nothing to keep, leaves.
struct GuidedOrder {
    let console: Console
    /// How many times one question is asked before giving up.
    static let attempts = 5

    /// The order the person described, or `nil` when they left.
    func ask(saved: SavedAddress?) -> Order? {
        var order = Order()
        console.err("Cake type:\n")
        for type in CakeType.allCases {
            console.err("  \(type.rawValue + 1)) \(type.name)\n")
        }
        guard
            let type = question(
                "Which one? (1-\(CakeType.allCases.count))", keeping: "1", hint: Self.typeHint,
                {
                    text in
                    Int(text).flatMap { CakeType(rawValue: $0 - 1) }
                        ?? CakeType.allCases.first { $0.name.lowercased() == text.lowercased() }
                }),
            let quantity = question(
                "How many cupcakes? (\(Order.quantityRange.lowerBound)-\(Order.quantityRange.upperBound))",
                keeping: String(order.quantity),
                hint: "Please answer a whole number from \(Order.quantityRange.lowerBound) to "
                    + "\(Order.quantityRange.upperBound).",
                { Int($0).flatMap { Order.quantityRange.contains($0) ? $0 : nil } }),
            let special = yesOrNo("Any special requests? (y/n)", keeping: false)
        else { return nil }
        order.type = type.rawValue
        order.quantity = quantity
        if special {
            guard let frosting = yesOrNo("  Extra frosting, $1.00 a cake? (y/n)", keeping: false),
                let sprinkles = yesOrNo("  Sprinkles, $0.50 a cake? (y/n)", keeping: false)
            else { return nil }
            order.specialRequestEnabled = frosting || sprinkles
            order.extraFrosting = frosting
            order.addSprinkles = sprinkles
        }
        console.err(saved == nil ? "Delivery address:\n" : "Delivery address (Enter keeps the saved one):\n")
        // The label asked, the field, its wire key (as validation names it), the saved value.
        let fields: [(String, WritableKeyPath<Order, String>, String, String?)] = [
            ("Name", \.name, "name", saved?.name),
            ("Street address", \.streetAddress, "streetAddress", saved?.streetAddress),
            ("City", \.city, "city", saved?.city),
            ("ZIP", \.zip, "zip", saved?.zip),
        ]
        for (label, field, wireKey, kept) in fields {
            var rule = ""
            let answer = question("  \(label)", keeping: kept.flatMap { $0.isEmpty ? nil : $0 }, hint: { rule }) {
                text in
                var trial = order
                trial[keyPath: field] = text
                let issue = trial.validate().first { $0.field == wireKey }
                rule = issue.map { "  \(label) \($0.rule)." } ?? ""
                return issue == nil ? trial[keyPath: field] : nil
            }
            guard let answer else { return nil }
            order[keyPath: field] = answer
        }
        return order
    }

    /// Shows the priced order and asks "Place order? [Y/n]"; Enter means yes.
    func confirm(_ order: Order, price: Price) -> Bool {
        console.err("\n")
        for line in PriceTable.lines(price) { console.err(line + "\n") }
        console.err("Deliver to \(order.name), \(order.streetAddress), \(order.city) \(order.zip).\n")
        return yesOrNo("Place order? [Y/n]", keeping: true, showDefault: false) ?? false
    }

    private static let typeHint =
        "Please answer 1 to \(CakeType.allCases.count), or a name: "
        + CakeType.allCases.map { $0.name.lowercased() }.joined(separator: ", ") + "."

    private func yesOrNo(_ prompt: String, keeping: Bool, showDefault: Bool = true) -> Bool? {
        question(
            prompt, keeping: keeping ? "y" : "n", showDefault: showDefault, hint: "Please answer y or n.",
            { text in
                switch text.lowercased() {
                case "y", "yes": true
                case "n", "no": false
                default: nil
                }
            })
    }

    private func question<Value>(
        _ prompt: String, keeping kept: String?, showDefault: Bool = true, hint: String,
        _ parse: (String) -> Value?
    ) -> Value? {
        question(prompt, keeping: kept, showDefault: showDefault, hint: { hint }, parse)
    }

    /// Asks until an answer parses: Enter keeps `kept`; the end of input, an empty answer with
    /// nothing to keep, or too many wrong answers give `nil`.
    private func question<Value>(
        _ prompt: String, keeping kept: String?, showDefault: Bool = true, hint: () -> String,
        _ parse: (String) -> Value?
    ) -> Value? {
        for _ in 0..<Self.attempts {
            console.err(kept.map { showDefault ? "\(prompt) [\($0)]: " : "\(prompt) " } ?? "\(prompt): ")
            guard let line = console.readLine() else {
                console.err("\n")
                return nil
            }
            let typed = String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            guard let text = typed.isEmpty ? kept : typed else { return nil }
            if let value = parse(text) { return value }
            console.err(hint() + "\n")
        }
        console.err("Too many answers that did not fit; leaving.\n")
        return nil
    }
}
