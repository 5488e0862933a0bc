import CupcakeDomain
import Foundation

/// `cupcake price`: the line items and total of an order; no address needed.
struct PriceCommand: Command {
    static let path = ["price"]
    static let abstract = "Price an order by the Cupcake Corner rules."
    static let usageArguments = "[<order-options>] [--json] [-]"
    static let discussion: String? = OrderOptions.stdinDiscussion
    static let options: [OptionSpec] =
        OrderOptions.specs + [
            .flag("--json", help: "Print {\"costCents\", \"currency\", \"lineItems\"} as JSON.")
        ]

    var order: Order
    var json: Bool

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals(allowing: ["-"])
        order = try OrderOptions.order(from: arguments, console: console)
        json = arguments.has("--json")
    }

    func run(console: Console) async throws(CLIError) {
        let price: Price
        do {
            price = try order.price()
        } catch {
            throw OrderOptions.invalid(error)
        }
        if json {
            console.print(JSONOutput.string(PriceSummary(price)))
            return
        }
        let rows =
            price.lineItems.map { ($0.description, Money(cents: $0.cents).formatted) } + [
                ("Total", price.total.formatted)
            ]
        let left = rows.map(\.0.count).max() ?? 0
        let right = rows.map(\.1.count).max() ?? 0
        for (index, row) in rows.enumerated() {
            if index == rows.count - 1 {
                console.print(String(repeating: "-", count: left + right + 2))
            }
            let padding = String(repeating: " ", count: left - row.0.count + 2 + right - row.1.count)
            console.print(row.0 + padding + row.1)
        }
    }
}

/// The JSON shape of `cupcake price --json`.
struct PriceSummary: Encodable {
    var costCents: Int
    var currency = "USD"
    var lineItems: [Price.LineItem]

    init(_ price: Price) {
        costCents = price.totalCents
        lineItems = price.lineItems
    }
}
