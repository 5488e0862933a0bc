import CupcakeDomain

/// `cupcake price`: the line items and total of an order; no address needed.
struct PriceCommand: Command {
    static let path = ["price"]
    static let arguments = [ArgumentSpec.standardInput]
    static let abstract = "Price an order by the Cupcake Corner rules."
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
        PriceTable.lines(price).forEach { console.print($0) }
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
