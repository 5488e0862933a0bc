import CupcakeCheckout
import CupcakeDomain
import FoundationEssentials

/// `cupcake order`: validates the whole order and places it with the endpoint.
struct OrderCommand: Command {
    static let path = ["order"]
    static let arguments = [ArgumentSpec.standardInput]
    static let abstract = "Place an order with the endpoint (or check it with --dry-run)."
    static let discussion: String? =
        OrderOptions.stdinDiscussion + """

            With no order option and standard input a terminal, it asks for the order the way the
            app does (the cake, how many, special requests, the address, prefilled from the saved
            one), shows the price and asks before placing it; Ctrl-C or Ctrl-D leaves. Piped
            input and scripts are never asked anything.
            Missing address fields are filled from the saved address ('cupcake address set').
            Exit codes: 0 placed, 64 usage, 65 invalid order or rejected by the endpoint,
            69 endpoint unreachable, 75 timed out or still failing after the retries,
            76 unexpected answer, 77 credentials refused, 78 configuration problem.
            """
    static let options: [OptionSpec] =
        OrderOptions.specs + EndpointOptions.specs + [
            .value("--idempotency-key", valueName: "<key>", help: "Pin the Idempotency-Key (default: a fresh UUID)."),
            .flag("--dry-run", help: "Validate and print the JSON that would be sent; send nothing."),
            .flag("--json", help: "Print JSON only."),
        ]

    var order: Order
    /// Whether to ask for the order on the terminal.
    var guided: Bool
    var dryRun: Bool
    var json: Bool
    var idempotencyKey: String
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals(allowing: ["-"])
        order = try OrderOptions.order(from: arguments, console: console)
        guided = console.inputIsTerminal && !OrderOptions.anyGiven(arguments) && !arguments.positionals.contains("-")
        dryRun = arguments.has("--dry-run")
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
        let key = arguments.value("--idempotency-key") ?? UUID().uuidString
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .usage(
                "The value for '--idempotency-key <key>' must be 1 to 255 visible ASCII characters.", arguments.command)
        }
        idempotencyKey = key
    }

    func run(console: Console) async throws(CLIError) {
        let directory = ConfigFiles.directory(environment: console.environment)
        let saved: SavedAddress?
        do {
            saved = try SavedAddress.load(from: directory)
        } catch {
            throw EndpointOptions.cliError(error)
        }
        // Read before any question, so a configuration problem is not found after the answers.
        let configuration = try EndpointOptions.configuration(endpointFlags, console: console)
        var filled = saved?.fill(order) ?? order
        let guide = GuidedOrder(console: console)
        if guided {
            guard let answered = guide.ask(saved: saved) else {
                console.printError("No order placed.")
                return
            }
            filled = answered
        }
        let valid: Order
        do {
            valid = try filled.validated()
        } catch {
            throw OrderOptions.invalid(error)
        }
        if dryRun {
            if !json {
                // Prose on standard error, so that standard output is the JSON alone (`| jq`).
                console.printError(
                    "Dry run: the order is valid and costs \(Money(cents: valid.costCents)). "
                        + "It would be sent to \(CheckoutConfiguration.display(configuration.endpoint)); nothing was sent."
                )
            }
            console.print(JSONOutput.string(valid))
            return
        }
        if guided {
            let price: Price
            do {
                price = try valid.price()
            } catch {
                throw OrderOptions.invalid(error)
            }
            guard guide.confirm(valid, price: price) else {
                console.printError("No order placed.")
                return
            }
        }
        let status = ProgressLine(enabled: console.errorIsTerminal, console: console)
        status.show("Placing order…")
        let client = CheckoutClient(configuration: configuration)
        let confirmation: Confirmation
        do {
            confirmation = try await client.place(valid, idempotencyKey: idempotencyKey) { event in
                switch event {
                case .attempt(let number, let total) where number > 1:
                    status.show("Placing order… (try \(number) of \(total))")
                case .waiting(let seconds, let reason):
                    status.show("\(reason); retrying in \(Self.tenths(seconds)) s…")
                default:
                    break
                }
            }
        } catch {
            status.finish("Order failed.")
            throw EndpointOptions.cliError(error)
        }
        status.finish("Order placed.")
        if let token = confirmation.receiptToken {
            let receipts = Receipts(directory: ConfigFiles.dataDirectory(environment: console.environment))
            do {
                try receipts.add(
                    Receipts.Receipt(
                        id: confirmation.id, token: token,
                        endpoint: CheckoutConfiguration.display(configuration.endpoint),
                        createdAt: confirmation.createdAt))
            } catch {
                // The order is placed; only reaching it again with the app key is lost.
                console.printError("Warning: the receipt was not kept: \(error.message)")
            }
        }
        if json {
            console.print(JSONOutput.string(confirmation))
            return
        }
        console.print(confirmation.order.confirmationMessage)
        console.print(
            "Order \(confirmation.id) · \(Money(cents: confirmation.costCents)) · placed \(confirmation.createdAt)")
    }

    /// Seconds to one decimal place ("1.5"), for the retry line.
    static func tenths(_ seconds: Double) -> String {
        let tenths = Int((max(0, seconds) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
