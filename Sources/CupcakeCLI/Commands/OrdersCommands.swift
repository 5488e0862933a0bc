import CupcakeCheckout
import CupcakeDomain
import FoundationEssentials

/// `cupcake orders list`: a page of the history as an aligned table.
struct OrdersListCommand: Command {
    static let path = ["orders", "list"]
    static let abstract = "List orders, newest first, a page at a time."
    static let options: [OptionSpec] =
        [
            .value(
                "--name-prefix", valueName: "<prefix>",
                help: "Names beginning with this (any case; % and _ are literal)."),
            .value("--type", valueName: "<type>", help: "Only this cake type: \(CakeType.choices).")
                .completing(.words(CakeType.allCases.map { $0.name.lowercased() })),
            .flag("--favorites", help: "Only favourites."),
            .value(
                "--status", valueName: "<statuses>",
                help: "Only these statuses, comma-separated (\(OrderStatus.wireNames)); all but cancelled by default."
            ).completing(.words(OrderStatus.allCases.map(\.wireName))),
            .value(
                "--sort", valueName: "<key>", help: "createdAt, name, cost or type; '-' in front for descending.",
                defaultValue: "-createdAt"
            ).completing(.words(sortKeys + sortKeys.map { "-" + $0 })),
            .value("--page", valueName: "<n>", help: "Page number, from 1.", defaultValue: "1"),
            .value("--per-page", valueName: "<n>", help: "Orders per page, at most 100.", defaultValue: "6"),
            .flag("--json", help: "Print the endpoint's JSON."),
        ] + EndpointOptions.specs

    /// The keys `--sort` takes (each also with '-' in front).
    static let sortKeys = ["createdAt", "name", "cost", "type"]

    var listing = OrdersClient.ListRequest()
    var json: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        listing.namePrefix = arguments.value("--name-prefix")
        if let type = arguments.value("--type") {
            guard CakeType(argument: type) != nil else {
                throw .invalidValue(
                    type, for: "--type <type>", expected: CakeType.choices,
                    choices: CakeType.allCases.map { $0.name.lowercased() }, arguments.command)
            }
            listing.type = type
        }
        listing.favoritesOnly = arguments.has("--favorites")
        if let statuses = arguments.value("--status") {
            for name in statuses.split(separator: ",", omittingEmptySubsequences: false)
            where OrderStatus(wireName: name) == nil {
                throw .invalidValue(
                    String(name), for: "--status <statuses>", expected: OrderStatus.wireNames,
                    choices: OrderStatus.allCases.map(\.wireName), arguments.command)
            }
            listing.statuses = statuses
        }
        if let sort = arguments.value("--sort") {
            let key = sort.hasPrefix("-") ? String(sort.dropFirst()) : sort
            let keys = Self.sortKeys
            guard keys.contains(key) else {
                throw .invalidValue(
                    sort, for: "--sort <key>", expected: "createdAt, name, cost or type, optionally with '-'",
                    choices: keys + keys.map { "-" + $0 }, arguments.command)
            }
            listing.sort = sort
        }
        listing.page = try arguments.integer("--page", in: 1...Int(Int32.max))
        listing.perPage = try arguments.integer("--per-page", in: 1...100)
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let configuration = try EndpointOptions.configuration(endpointFlags, console: console)
        let client = OrdersClient(configuration: configuration)
        let page: OrderListPage
        do {
            page = try await client.list(listing)
        } catch  where error.code == .forbidden {
            try await listReceipts(client, configuration, console: console, refusal: error)
            return
        } catch {
            throw EndpointOptions.cliError(error)
        }
        if json {
            console.print(OrderTable.pretty(page.raw))
            return
        }
        var orders = page.orders
        // The default sort is PlacedOrder's natural order: when every row is complete, order the
        // page by it, which is how the server must have ordered it.
        if listing.sort == nil || listing.sort == "-createdAt" {
            let placed = orders.compactMap(\.placed)
            if placed.count == orders.count {
                orders = zip(placed, orders).sorted { $0.0 < $1.0 }.map(\.1)
            }
        }
        let number = page.page ?? listing.page ?? 1
        if orders.isEmpty {
            if let pages = page.totalPages, pages > 0, number > pages {
                throw CLIError(
                    .usage,
                    "There is no page \(number): the list has \(pages) page\(pages == 1 ? "" : "s")"
                        + "\(page.total.map { " (\($0) order\($0 == 1 ? "" : "s"))" } ?? "").")
            }
            console.print("No orders.")
            return
        }
        for line in OrderTable.render(orders) {
            console.print(line)
        }
        let pages = page.totalPages.map(String.init) ?? "?"
        let total = page.total.map { " (\($0) order\($0 == 1 ? "" : "s"))" } ?? ""
        console.print("page \(number) of \(pages)\(total)")
    }
}

extension OrdersListCommand {
    /// Without the staff key the server lists nothing (403): show the orders this machine
    /// placed there instead, each fetched with its receipt token, and say so.
    func listReceipts(
        _ client: OrdersClient, _ configuration: CheckoutConfiguration, console: Console, refusal: CheckoutError
    ) async throws(CLIError) {
        let receipts = Receipts(directory: ConfigFiles.dataDirectory(environment: console.environment))
        let kept: [Receipts.Receipt]
        do {
            kept = try receipts.receipts(at: configuration.endpoint)
        } catch {
            throw EndpointOptions.cliError(error)
        }
        guard !kept.isEmpty else { throw EndpointOptions.cliError(refusal) }
        var orders: [ListedOrder] = []
        for receipt in kept.reversed() {
            // A cancelled order answers 404: leave it out.
            if let order = try? await client.show(id: receipt.id, token: receipt.token) { orders.append(order) }
        }
        console.printError(
            "The server lists orders only with the staff key; showing the \(orders.count) order"
                + "\(orders.count == 1 ? "" : "s") placed from this machine (\(receipts.file)).")
        if json {
            let items = orders.map { String(decoding: $0.raw, as: UTF8.self) }.joined(separator: ",")
            console.print(OrderTable.pretty(Data(("[" + items + "]").utf8)))
            return
        }
        if orders.isEmpty {
            console.print("No orders.")
        } else {
            for line in OrderTable.render(orders) {
                console.print(line)
            }
        }
    }
}

/// The receipt token of order `id` at the configured endpoint, if this machine placed it.
func receiptToken(_ id: String, _ configuration: CheckoutConfiguration, _ console: Console) -> String? {
    Receipts(directory: ConfigFiles.dataDirectory(environment: console.environment))
        .token(for: id, at: configuration.endpoint)
}

/// `cupcake orders show ID`.
struct OrdersShowCommand: Command {
    static let path = ["orders", "show"]
    static let arguments = [ArgumentSpec.orderID]
    static let abstract = "Show one order."
    static let options: [OptionSpec] = [.flag("--json", help: "Print JSON.")] + EndpointOptions.specs

    var id: String
    var json: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        id = try OrderTable.singleID(arguments)
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let configuration = try EndpointOptions.configuration(endpointFlags, console: console)
        let client = OrdersClient(configuration: configuration)
        let order: ListedOrder
        do {
            order = try await client.show(id: id, token: receiptToken(id, configuration, console))
        } catch {
            throw EndpointOptions.cliError(error)
        }
        if json {
            console.print(OrderTable.pretty(order.raw))
            return
        }
        for line in OrderTable.details(order) {
            console.print(line)
        }
    }
}

/// `cupcake orders favorite ID [--off]`.
struct OrdersFavoriteCommand: Command {
    static let path = ["orders", "favorite"]
    static let arguments = [ArgumentSpec.orderID]
    static let abstract = "Mark an order as a favourite (or unmark it with --off)."
    static let options: [OptionSpec] = [.flag("--off", help: "Unmark it.")] + EndpointOptions.specs

    var id: String
    var isFavorite: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        id = try OrderTable.singleID(arguments)
        isFavorite = !arguments.has("--off")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let configuration = try EndpointOptions.configuration(endpointFlags, console: console)
        let client = OrdersClient(configuration: configuration)
        do {
            _ = try await client.setFavorite(id: id, isFavorite, token: receiptToken(id, configuration, console))
        } catch {
            throw EndpointOptions.cliError(error)
        }
        console.print(isFavorite ? "★ Order \(id) is a favourite." : "Order \(id) is no longer a favourite.")
    }
}

/// `cupcake orders advance ID [--to STATUS] [--reason TEXT]`.
struct OrdersAdvanceCommand: Command {
    static let path = ["orders", "advance"]
    static let arguments = [ArgumentSpec.orderID]
    static let abstract = "Move an order on: placed, baking, out for delivery, delivered (staff)."
    static let options: [OptionSpec] =
        [
            .value(
                "--to", valueName: "<status>",
                help: "Where to move it (\(OrderStatus.wireNames)); the next step by default."
            ).completing(.words(OrderStatus.allCases.map(\.wireName))),
            .value("--reason", valueName: "<text>", help: "Why (cancelling a started order needs one)."),
            .flag("--json", help: "Print the order as it now is, as JSON."),
        ] + EndpointOptions.specs

    var id: String
    var target: String?
    var reason: String?
    var json: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        id = try OrderTable.singleID(arguments)
        if let target = arguments.value("--to") {
            guard OrderStatus(wireName: target) != nil else {
                throw .invalidValue(
                    target, for: "--to <status>", expected: OrderStatus.wireNames,
                    choices: OrderStatus.allCases.map(\.wireName), arguments.command)
            }
            self.target = target
        }
        reason = arguments.value("--reason")
        json = arguments.has("--json")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let configuration = try EndpointOptions.configuration(endpointFlags, console: console)
        let client = OrdersClient(configuration: configuration)
        let moved: (before: ListedOrder, after: ListedOrder)
        do {
            moved = try await client.advance(
                id: id, to: target, reason: reason, token: receiptToken(id, configuration, console))
        } catch {
            throw EndpointOptions.cliError(error)
        }
        if json {
            console.print(OrderTable.pretty(moved.after.raw))
            return
        }
        console.print(
            "Order \(TerminalText.escaped(id)): \(OrderTable.status(moved.before.status)) → "
                + "\(OrderTable.status(moved.after.status)).")
    }
}

/// `cupcake orders cancel ID`./// `cupcake orders cancel ID`.
struct OrdersCancelCommand: Command {
    static let path = ["orders", "cancel"]
    static let arguments = [ArgumentSpec.orderID]
    static let abstract = "Cancel an order (it is kept, cancelled)."
    static let options: [OptionSpec] =
        [
            .flag("--yes", "-y", help: "Cancel without asking (needed when no terminal can be asked)."),
            .value("--reason", valueName: "<text>", help: "Why (the staff need one to cancel a started order)."),
        ]
        + EndpointOptions.specs

    var id: String
    var reason: String?
    var endpointFlags: CheckoutConfiguration.Flags
    var confirmed: Bool

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        id = try OrderTable.singleID(arguments)
        reason = arguments.value("--reason")
        endpointFlags = try EndpointOptions.flags(arguments)
        confirmed = arguments.has("--yes")
        guard confirmed || console.inputIsTerminal else {
            throw .usage(
                "Cancelling an order cannot be undone; without a terminal to ask on, add --yes.", arguments.command)
        }
    }

    func run(console: Console) async throws(CLIError) {
        guard confirmed || console.confirm("Cancel order \(id)? This cannot be undone.") else {
            console.printError("Order \(id) was not cancelled.")
            return
        }
        let configuration = try EndpointOptions.configuration(endpointFlags, console: console)
        let client = OrdersClient(configuration: configuration)
        do {
            try await client.cancel(id: id, reason: reason, token: receiptToken(id, configuration, console))
        } catch {
            throw EndpointOptions.cliError(error)
        }
        console.print("Order \(id) is cancelled.")
    }
}
