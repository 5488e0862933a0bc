import CupcakeDomain
import Foundation

/// `cupcake order`: validates the whole order and places it with the endpoint.
struct OrderCommand: Command {
    static let path = ["order"]
    static let abstract = "Place an order (or check it with --dry-run)."
    static let usageArguments = "[<order-options>] [--dry-run] [--json] [-]"
    static let discussion: String? = OrderOptions.stdinDiscussion
    static let options: [OptionSpec] =
        OrderOptions.specs + [
            .flag("--dry-run", help: "Validate and print the JSON that would be sent; send nothing."),
            .flag("--json", help: "Print JSON only."),
        ]

    var order: Order
    var dryRun: Bool
    var json: Bool

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals(allowing: ["-"])
        order = try OrderOptions.order(from: arguments, console: console)
        dryRun = arguments.has("--dry-run")
        json = arguments.has("--json")
    }

    func run(console: Console) async throws(CLIError) {
        let valid: Order
        do {
            valid = try order.validated()
        } catch {
            throw OrderOptions.invalid(error)
        }
        guard dryRun else {
            throw CLIError(.unavailable, "Sending orders is not available yet; use --dry-run.")
        }
        if !json {
            console.print("Dry run: the order is valid and costs \(Money(cents: valid.costCents)). Nothing was sent.")
        }
        console.print(JSONOutput.string(valid))
    }
}
