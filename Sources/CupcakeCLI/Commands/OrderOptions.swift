import CupcakeDomain

/// The options that describe an order, shared by `price` and `order`, and how they combine with
/// order JSON on standard input.
enum OrderOptions {
    static let section = "ORDER OPTIONS"

    static let specs: [OptionSpec] = [
        .value(
            "--type", valueName: "<type>", help: "Cake type: \(CakeType.choices).", defaultValue: "0", section: section
        ).completing(.words(CakeType.allCases.map { $0.name.lowercased() })),
        .value(
            "--qty", "--quantity", valueName: "<n>", help: "How many cupcakes, 3...20.", defaultValue: "3",
            section: section),
        .flag("--frosting", help: "Extra frosting, $1.00 a cake (turns special requests on).", section: section),
        .flag("--sprinkles", help: "Sprinkles, $0.50 a cake (turns special requests on).", section: section),
        .value("--name", valueName: "<name>", help: "Delivery name.", section: section),
        .value("--street", valueName: "<street>", help: "Delivery street address.", section: section),
        .value("--city", valueName: "<city>", help: "Delivery city.", section: section),
        .value("--zip", valueName: "<zip>", help: "Delivery ZIP code.", section: section),
    ]

    static let stdinDiscussion = """
        Order JSON (the app's wire keys) is read from standard input when '-' is given, or when no
        order option is given and standard input is not a terminal. With '-', options override
        the JSON's fields. Empty input means the default order.
        """

    /// Builds the order from standard input (when it applies) and the options.
    ///
    /// - Throws: 64 for a bad option value or `-` on a terminal, 65 for JSON that is not an order.
    static func order(from arguments: ParsedArguments, console: Console) throws(CLIError) -> Order {
        let anyOption = anyGiven(arguments)
        let dash = arguments.positionals.contains("-")
        var order = Order()
        if dash && console.inputIsTerminal {
            throw .usage(
                "'-' reads order JSON from standard input, which is a terminal; pipe the JSON in.", arguments.command)
        }
        if dash || (!anyOption && !console.inputIsTerminal) {
            let data = console.readInput()
            if !data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                do {
                    order = try Order.decode(json: data)
                } catch {
                    throw CLIError(.data, "The order JSON on standard input is not an order: \(error)")
                }
            }
        }
        if let text = arguments.value("--type") {
            // An index out of range and a misspelt name are both values the option does not take.
            guard let type = CakeType(argument: text) else {
                throw .invalidValue(
                    text, for: "--type <type>", expected: CakeType.choices,
                    choices: CakeType.allCases.map { $0.name.lowercased() }, arguments.command)
            }
            order.type = type.rawValue
        }
        return try apply(arguments, to: order)
    }

    /// Whether any order option was given.
    static func anyGiven(_ arguments: ParsedArguments) -> Bool {
        specs.contains { arguments.has($0.key) || arguments.value($0.key) != nil }
    }

    private static func apply(_ arguments: ParsedArguments, to base: Order) throws(CLIError) -> Order {
        var order = base
        if let quantity = try arguments.integer("--qty") { order.quantity = quantity }
        if arguments.has("--frosting") {
            order.specialRequestEnabled = true
            order.extraFrosting = true
        }
        if arguments.has("--sprinkles") {
            order.specialRequestEnabled = true
            order.addSprinkles = true
        }
        if let name = arguments.value("--name") { order.name = name }
        if let street = arguments.value("--street") { order.streetAddress = street }
        if let city = arguments.value("--city") { order.city = city }
        if let zip = arguments.value("--zip") { order.zip = zip }
        return order
    }

    /// The issues of an order (or of an address: `subject`) as a 65 error, one problem per line
    /// after the first.
    static func invalid(_ error: OrderValidationError, subject: String = "order") -> CLIError {
        let lines = error.issues.map { "  - \($0.field) \($0.rule)" }
        let count = error.issues.count == 1 ? "a rule" : "\(error.issues.count) rules"
        return CLIError(.data, (["The \(subject) breaks \(count):"] + lines).joined(separator: "\n"))
    }
}
