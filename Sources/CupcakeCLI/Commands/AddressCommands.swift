import CupcakeCheckout
import CupcakeDomain

/// `cupcake address set`: validates and saves the delivery address.
struct AddressSetCommand: Command {
    static let path = ["address", "set"]
    static let abstract = "Save the delivery address used to fill orders."
    static let options: [OptionSpec] = [
        .value("--name", valueName: "<name>", help: "Delivery name.", required: true),
        .value("--street", valueName: "<street>", help: "Street address.", required: true),
        .value("--city", valueName: "<city>", help: "City.", required: true),
        .value("--zip", valueName: "<zip>", help: "ZIP code.", required: true),
    ]

    var address: SavedAddress

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        address = SavedAddress(
            name: arguments.value("--name") ?? "", streetAddress: arguments.value("--street") ?? "",
            city: arguments.value("--city") ?? "", zip: arguments.value("--zip") ?? "")
        let issues = address.validate()
        guard issues.isEmpty else {
            throw OrderOptions.invalid(OrderValidationError(issues: issues), subject: "address")
        }
    }

    func run(console: Console) async throws(CLIError) {
        let directory = ConfigFiles.directory(environment: console.environment)
        do {
            try address.save(in: directory)
        } catch {
            throw CLIError(.cannotCreate, error.message)
        }
        console.print("Saved the delivery address to \(SavedAddress.file(in: directory)).")
    }
}

/// `cupcake address show`: prints the saved address.
struct AddressShowCommand: Command {
    static let path = ["address", "show"]
    static let abstract = "Show the saved delivery address."
    static let options: [OptionSpec] = [.flag("--json", help: "Print JSON.")]

    var json: Bool

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        json = arguments.has("--json")
    }

    func run(console: Console) async throws(CLIError) {
        let saved: SavedAddress?
        do {
            saved = try SavedAddress.load(from: ConfigFiles.directory(environment: console.environment))
        } catch {
            throw EndpointOptions.cliError(error)
        }
        guard let saved else {
            if json {
                console.print("null")
            } else {
                console.print("No delivery address is saved. Save one with 'cupcake address set'.")
            }
            return
        }
        if json {
            console.print(JSONOutput.string(saved))
            return
        }
        console.print(saved.name)
        console.print(saved.streetAddress)
        console.print("\(saved.city) \(saved.zip)")
    }
}

/// `cupcake address clear`: forgets the saved address.
struct AddressClearCommand: Command {
    static let path = ["address", "clear"]
    static let abstract = "Forget the saved delivery address."
    static let options: [OptionSpec] = []

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
    }

    func run(console: Console) async throws(CLIError) {
        do {
            let removed = try SavedAddress.clear(in: ConfigFiles.directory(environment: console.environment))
            console.print(removed ? "Forgot the saved delivery address." : "No delivery address was saved.")
        } catch {
            throw CLIError(.cannotCreate, error.message)
        }
    }
}
