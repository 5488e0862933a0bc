import CupcakeCheckout
import CupcakeJSON
import FoundationEssentials

/// The event types an endpoint may ask for.
private let eventTypes = ["order.placed", "order.status_changed", "order.cancelled"]

/// Runs one request of a webhook command with the configured endpoint and key, its failure as
/// the CLI's error.
private func webhooksCall<T>(
    _ flags: CheckoutConfiguration.Flags, _ console: Console,
    _ call: (WebhooksClient) async throws(CheckoutError) -> T
) async throws(CLIError) -> T {
    let client = WebhooksClient(configuration: try EndpointOptions.configuration(flags, console: console))
    do {
        return try await call(client)
    } catch {
        throw EndpointOptions.cliError(error)
    }
}

/// `--json`: the server's JSON, pretty, keys sorted, escaped for the terminal.
private func printJSON(_ value: JSONValue, _ console: Console) {
    console.print(TerminalText.escapedJSON(value.text(pretty: true, sortedKeys: true)))
}

/// `cupcake webhooks add URL [--events TYPES]` (staff).
struct WebhooksAddCommand: Command {
    static let path = ["webhooks", "add"]
    static let arguments = [ArgumentSpec(name: "<url>", help: "Where to POST events (http or https).")]
    static let abstract = "Send the shop's events to a URL, signed; prints the secret to verify them with."
    static let options: [OptionSpec] =
        [
            .value(
                "--events", valueName: "<types>",
                help: "Only these event types, comma-separated (\(eventTypes.joined(separator: ", "))); all by default."
            ).completing(.words(eventTypes)),
            .flag("--json", help: "Print the endpoint as JSON."),
        ] + EndpointOptions.specs

    var url: String
    var types: [String] = []
    var json: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        guard let url = arguments.positionals.first else {
            throw .usage("Missing expected argument '<url>'.", arguments.command)
        }
        guard arguments.positionals.count == 1 else {
            throw .usage("Unexpected argument '\(arguments.positionals[1])'.", arguments.command)
        }
        self.url = url
        if let list = arguments.value("--events") {
            for name in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
                guard eventTypes.contains(name) else {
                    throw .invalidValue(
                        name, for: "--events <types>", expected: eventTypes.joined(separator: ", "),
                        choices: eventTypes, arguments.command)
                }
                if !types.contains(name) { types.append(name) }
            }
        }
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let endpoint = try await webhooksCall(endpointFlags, console) { client throws(CheckoutError) in
            try await client.add(url: url, eventTypes: types)
        }
        if json {
            printJSON(endpoint, console)
            return
        }
        let id = TerminalText.escaped(endpoint["id"]?.string ?? "?")
        console.print(
            "Webhook endpoint \(id) sends \(WebhooksListCommand.types(endpoint)) to \(TerminalText.escaped(url)).")
        console.print("Its secret (shown this once; verify each delivery with it):")
        console.print(TerminalText.escaped(endpoint["secret"]?.string ?? "?"))
    }
}

/// `cupcake webhooks list` (staff).
struct WebhooksListCommand: Command {
    static let path = ["webhooks", "list"]
    static let abstract = "List the webhook endpoints and their health."
    static let options: [OptionSpec] = [.flag("--json", help: "Print JSON.")] + EndpointOptions.specs

    var json: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let page = try await webhooksCall(endpointFlags, console) { client throws(CheckoutError) in
            try await client.list()
        }
        if json {
            printJSON(page, console)
            return
        }
        let endpoints = page["data"]?.elements ?? []
        guard !endpoints.isEmpty else {
            console.print("No webhook endpoints; add one with 'cupcake webhooks add URL'.")
            return
        }
        for endpoint in endpoints {
            console.print(
                "\(OrderTable.cell(endpoint["id"]?.string ?? "?"))  \(Self.health(endpoint))  "
                    + "\(TerminalText.escaped(endpoint["url"]?.string ?? "?"))  (\(Self.types(endpoint)))")
        }
    }

    /// "healthy", "failing since …" or "disabled: why".
    static func health(_ endpoint: JSONValue) -> String {
        if endpoint["enabled"]?.bool == false {
            return "disabled: " + TerminalText.escaped(endpoint["disabledReason"]?.string ?? "by the staff")
        }
        if let since = endpoint["failingSince"]?.string { return "failing since \(TerminalText.escaped(since))" }
        return "healthy"
    }

    /// The event types, comma-separated.
    static func types(_ endpoint: JSONValue) -> String {
        let types = (endpoint["eventTypes"]?.elements ?? []).compactMap(\.string)
        return types.count == eventTypes.count ? "every event" : TerminalText.escaped(types.joined(separator: ", "))
    }
}

/// `cupcake webhooks remove ID` (staff).
struct WebhooksRemoveCommand: Command {
    static let path = ["webhooks", "remove"]
    static let arguments = [
        ArgumentSpec(name: "<id>", help: "The endpoint's id, as 'cupcake webhooks list' prints it.")
    ]
    static let abstract = "Stop sending events to an endpoint, and forget its deliveries."
    static let options: [OptionSpec] = EndpointOptions.specs

    var id: String
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        id = try OrderTable.singleID(arguments)
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        try await webhooksCall(endpointFlags, console) { client throws(CheckoutError) in try await client.remove(id: id)
        }
        console.print("Webhook endpoint \(TerminalText.escaped(id)) is removed.")
    }
}

/// `cupcake webhooks deliveries ID` (staff).
struct WebhooksDeliveriesCommand: Command {
    static let path = ["webhooks", "deliveries"]
    static let arguments = [
        ArgumentSpec(name: "<id>", help: "The endpoint's id, as 'cupcake webhooks list' prints it.")
    ]
    static let abstract = "Show an endpoint's latest delivery attempts, newest first."
    static let options: [OptionSpec] =
        [
            .value("--limit", valueName: "<n>", help: "How many, at most 500.", defaultValue: "20"),
            .flag("--json", help: "Print JSON."),
        ] + EndpointOptions.specs

    var id: String
    var limit: Int
    var json: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        id = try OrderTable.singleID(arguments)
        limit = try arguments.integer("--limit", in: 1...500) ?? 20
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let page = try await webhooksCall(endpointFlags, console) { client throws(CheckoutError) in
            try await client.deliveries(id: id, limit: limit)
        }
        if json {
            printJSON(page, console)
            return
        }
        let attempts = page["data"]?.elements ?? []
        guard !attempts.isEmpty else {
            console.print("No deliveries to endpoint \(TerminalText.escaped(id)) yet.")
            return
        }
        for attempt in attempts {
            let status = attempt["status"]?.integer ?? 0
            let outcome =
                status == 0
                ? "no answer: " + TerminalText.escaped(attempt["error"]?.string ?? "?") : "HTTP \(status)"
            console.print(
                "\(OrderTable.cell(attempt["at"]?.string ?? "?"))  \(OrderTable.cell(attempt["eventId"]?.string ?? "?"))  "
                    + "\(attempt["durationMs"]?.integer ?? 0) ms  \(outcome)")
        }
    }
}

/// `cupcake events list [--after POSITION]` (staff): the events feed.
struct EventsListCommand: Command {
    static let path = ["events", "list"]
    static let abstract = "List the shop's events (placed, moved, cancelled), oldest first."
    static let options: [OptionSpec] =
        [
            .value(
                "--after", valueName: "<position>", help: "Only events after this position (a 'next' printed before)."),
            .value("--limit", valueName: "<n>", help: "How many, at most 500.", defaultValue: "20"),
            .flag("--json", help: "Print the feed's JSON."),
        ] + EndpointOptions.specs

    var after: String?
    var limit: Int
    var json: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        after = arguments.value("--after")
        limit = try arguments.integer("--limit", in: 1...500) ?? 20
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let page = try await webhooksCall(endpointFlags, console) { client throws(CheckoutError) in
            try await client.events(after: after, limit: limit)
        }
        if json {
            printJSON(page, console)
            return
        }
        for event in page["data"]?.elements ?? [] {
            let order = event["data"]
            console.print(
                "\(OrderTable.cell(event["timestamp"]?.string ?? "?"))  \(OrderTable.cell(event["id"]?.string ?? "?"))  "
                    + "\(OrderTable.cell(event["type"]?.string ?? "?"))  order \(OrderTable.cell(order?["id"]?.string ?? "?"))"
                    + "  \(OrderTable.status(order?["status"]?.string))")
        }
        let next = TerminalText.escaped(page["next_after"]?.string ?? "")
        console.print(
            (page["data"]?.elements ?? []).isEmpty
                ? "Nothing new; ask again with --after \(next)." : "Next: --after \(next)")
    }
}
