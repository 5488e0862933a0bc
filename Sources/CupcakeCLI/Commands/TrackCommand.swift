import CupcakeCheckout
import CupcakeDomain
import CupcakeJSON
import FoundationEssentials
import Synchronization

/// `cupcake track ID [--follow]`: where the customer's order is, from the receipt saved when it
/// was placed; with `--follow`, each change as it happens until it is delivered or cancelled.
struct TrackCommand: Command {
    static let path = ["track"]
    static let arguments = [ArgumentSpec.orderID]
    static let abstract = "Show where your order is; --follow prints each change as it happens."
    static let options: [OptionSpec] =
        [.flag("--follow", "-f", help: "Keep printing each change until the order is delivered or cancelled.")]
        + EndpointOptions.specs

    /// The longest wait between attempts to resume a broken stream, in seconds.
    static let longestWait = 5.0
    /// Attempts in a row that may fail before giving up (exit 75).
    static let attempts = 30

    var id: String
    var follow: Bool
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        id = try OrderTable.singleID(arguments)
        follow = arguments.has("--follow")
        endpointFlags = try EndpointOptions.flags(arguments)
    }

    func run(console: Console) async throws(CLIError) {
        let configuration = try EndpointOptions.configuration(endpointFlags, console: console)
        let client = OrdersClient(configuration: configuration)
        let token = receiptToken(id, configuration, console)
        let order: ListedOrder
        do {
            order = try await client.show(id: id, token: token)
        } catch {
            throw EndpointOptions.cliError(error)
        }
        let name = TerminalText.escaped(id)
        console.print("Order \(name): \(OrderTable.status(order.status))")
        for entry in order.history {
            console.print(Self.line(status: entry.status, at: entry.at, by: entry.by, reason: entry.reason))
        }
        let status = order.status.flatMap { OrderStatus(wireName: $0) }
        guard follow, status?.isFinal != true else { return }
        try await followStream(client, token: token, from: order.version ?? 0, console: console)
    }

    /// One history line: "  2026-12-04 21:09:03 +00:00  baking by staff".
    static func line(status: String?, at: String?, by: String?, reason: String?) -> String {
        let who = by.map { " by \(OrderTable.cell($0))" } ?? ""
        let why = reason.map { ": \(OrderTable.cell($0))" } ?? ""
        return "  \(OrderTable.placed(at))  \(OrderTable.status(status))\(who)\(why)"
    }

    /// Prints each change after `version` until the order is final, resuming a broken stream
    /// from the last event it gave (`Last-Event-ID`), so nothing is missed or printed twice.
    private func followStream(_ client: OrdersClient, token: String?, from version: Int, console: Console)
        async throws(CLIError)
    {
        let name = TerminalText.escaped(id)
        console.printError("Following order \(name); Ctrl-C to stop.")
        // (the last event id, the last version printed, the final status reached, whether a
        // stream opened since the last break)
        let state = Mutex(
            (lastID: String?.none, version: version, final: String?.none, opened: false, broken: false))
        var failures = 0
        while true {
            var failure: CheckoutError?
            do {
                try await client.follow(id: id, token: token, lastEventID: state.withLock { $0.lastID }) {
                    message in
                    if message.event == "retry" {
                        let resumed = state.withLock { current -> Bool in
                            defer {
                                current.opened = true
                                current.broken = false
                            }
                            return current.broken
                        }
                        if resumed { console.printError("Resumed.") }
                        return true
                    }
                    guard message.event == "status", let data = try? JSONValue.parse(Array(message.data.utf8)) else {
                        return true
                    }
                    let print = state.withLock { current -> Bool in
                        current.lastID = message.id ?? current.lastID
                        let eventVersion = data["version"]?.integer ?? 0
                        guard eventVersion > current.version else { return false }
                        current.version = eventVersion
                        if let status = data["status"]?.string, OrderStatus(wireName: status)?.isFinal == true {
                            current.final = status
                        }
                        return true
                    }
                    if print {
                        console.print(
                            Self.line(
                                status: data["status"]?.string, at: data["at"]?.string, by: data["by"]?.string,
                                reason: data["reason"]?.string))
                    }
                    return state.withLock { $0.final == nil }
                }
            } catch  where error.code == .notFound || error.code == .unauthorized {
                throw EndpointOptions.cliError(error)
            } catch {
                failure = error
            }
            let (final, opened) = state.withLock { current -> (String?, Bool) in
                defer { current.opened = false }
                return (current.final, current.opened)
            }
            if let final {
                console.print("Order \(name) is \(OrderTable.status(final)).")
                return
            }
            if opened { failures = 0 }
            failures += 1
            guard failures < Self.attempts else {
                throw CLIError(
                    .temporary, "The live updates for order \(name) broke \(Self.attempts) times in a row; gave up.")
            }
            let wait = min(Self.longestWait, Double(1 << min(failures - 1, 3)) * 0.5)
            let reason = failure?.message ?? "the server ended the stream"
            console.printError("The live updates broke (\(reason)); resuming in \(wait) s…")
            state.withLock { $0.broken = true }
            try? await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
        }
    }
}
