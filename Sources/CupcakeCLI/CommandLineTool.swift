import CupcakeCheckout
import CupcakeDomain
import Dispatch

/// The `cupcake` command line: finds the subcommand, parses, validates, runs, and maps every
/// failure to one message and one exit code. Only `main` exits.
public enum CommandLineTool {
    /// Every subcommand, in help order.
    package static let commands: [any CommandSpec.Type] = [
        PriceCommand.self,
        OrderCommand.self,
        ServeCommand.self,
        BackupCommand.self,
        AddressSetCommand.self,
        AddressShowCommand.self,
        AddressClearCommand.self,
        OrdersListCommand.self,
        OrdersShowCommand.self,
        OrdersFavoriteCommand.self,
        OrdersAdvanceCommand.self,
        OrdersCancelCommand.self,
        TrackCommand.self,
        WebhooksAddCommand.self,
        WebhooksListCommand.self,
        WebhooksRemoveCommand.self,
        WebhooksDeliveriesCommand.self,
        EventsListCommand.self,
        CompletionCommand.self,
    ]

    /// The commands as the completions and the manual page see them.
    static var tree: CommandTree { CommandTree(commands: commands, groups: groups) }

    /// The top-level words and what they do, for the root help.
    static var groups: [(name: String, abstract: String)] {
        var seen: [(name: String, abstract: String)] = []
        for command in commands where !seen.contains(where: { $0.name == command.path[0] }) {
            let abstract = command.path.count == 1 ? command.abstract : groupAbstracts[command.path[0]] ?? ""
            seen.append((command.path[0], abstract))
        }
        return seen
    }

    static let groupAbstracts: [String: String] = [
        "address": "Save, show or forget the delivery address.",
        "orders": "List, show, favourite or cancel placed orders.",
        "webhooks": "Send the shop's events to other systems, signed (staff).",
        "events": "Read the shop's events as a feed (staff).",
    ]

    /// Runs the command line and returns the exit status; writes only through `console`.
    ///
    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - serverSide: what runs `serve` and `backup` (`cupcake-server`, started in this
    ///     process's place, unless this is that executable).
    package static func run(_ arguments: [String], console: Console, serverSide: any ServerSide) async -> Int32 {
        do {
            try await dispatch(arguments, console: console, serverSide: serverSide)
            return ExitCode.success.rawValue
        } catch {
            report(error, console: console)
            return error.code.rawValue
        }
    }

    /// Opens descriptors 0, 1 and 2 on /dev/null where they are closed (see
    /// `StandardDescriptors`); the executable calls it before anything else.
    public static func reserveStandardDescriptors() {
        StandardDescriptors.reserve()
    }

    /// Runs the command line on a task whose jobs run on the calling thread, and returns when it
    /// is done; for the `cupcake` executable's synchronous `main`. A one-shot command starts no
    /// thread (see ``CallingThreadExecutor``), and `serve` hands over to `cupcake-server` from
    /// the main thread.
    public static func runAndWait(_ arguments: [String], console: Console) -> Int32 {
        CallingThreadExecutor.run {
            await run(arguments, console: console, serverSide: ServerExecutable())
        }
    }

    /// Runs the command line on a task on the global executor and blocks the calling thread
    /// until it is done, with `serve` and `backup` run by `serverSide` (`cupcake-server`, whose
    /// server needs the runtime's threads).
    package static func runAndWait(_ arguments: [String], console: Console, serverSide: any ServerSide) -> Int32 {
        final class Outcome: @unchecked Sendable {
            // Safe: written once by the task before `done` is signalled, read after the wait.
            var status: Int32 = 0
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            outcome.status = await run(arguments, console: console, serverSide: serverSide)
            done.signal()
        }
        done.wait()
        return outcome.status
    }

    /// The one place an error becomes text on standard error.
    static func report(_ error: CLIError, console: Console) {
        console.printError("Error: \(error.message)")
        if let path = error.usageOf {
            if let command = commands.first(where: { $0.path == path.words }) {
                console.printError("Usage: \(HelpFormatter.usageLine(command))")
            }
            console.printError("  See '\(path.fullName) --help' for more information.")
        }
    }

    private static func dispatch(_ arguments: [String], console: Console, serverSide: any ServerSide)
        async throws(CLIError)
    {
        let root = CommandPath(words: [])
        guard let first = arguments.first else {
            console.err(HelpFormatter.rootHelp(groups: groups))
            throw CLIError(.usage, "Missing subcommand.")
        }
        switch first {
        case "-h", "--help":
            console.out(HelpFormatter.rootHelp(groups: groups))
            return
        case "--version", "-V", "version":
            console.print(Cupcake.version)
            return
        case "help":
            console.out(try help(for: Array(arguments.dropFirst())))
            return
        default:
            break
        }
        guard let (command, rest) = resolve(arguments) else {
            if first.hasPrefix("-") {
                var message = "Unknown option '\(first)'."
                if let suggestion = ArgumentParser.suggestion(for: first, among: ["--help", "--version"]) {
                    message += " Did you mean '\(suggestion)'?"
                }
                throw .usage(message, root)
            }
            let names = groups.map(\.name)
            var message = "Unknown subcommand '\(first)'."
            if let suggestion = ArgumentParser.suggestion(for: first, among: names) {
                message += " Did you mean '\(suggestion)'?"
            }
            throw CLIError(.usage, message + " See 'cupcake --help'.")
        }
        if command == nil {
            // A group such as `cupcake orders` with no subcommand, or with --help.
            let members = commands.filter { $0.path[0] == first }
            let text = HelpFormatter.groupHelp(name: first, abstract: groupAbstracts[first] ?? "", commands: members)
            if rest.contains("-h") || rest.contains("--help") {
                console.out(text)
                return
            }
            if let unknown = rest.first {
                // One line that says what went wrong, not the whole help.
                var message = "Unknown subcommand '\(first) \(unknown)'."
                if let suggestion = ArgumentParser.suggestion(for: unknown, among: members.map { $0.path[1] }) {
                    message += " Did you mean '\(first) \(suggestion)'?"
                }
                throw CLIError(.usage, message + " See 'cupcake \(first) --help'.")
            }
            console.err(text)
            throw CLIError(.usage, "Missing subcommand for '\(first)'.")
        }
        guard let command else { return }
        let optionWords = rest.prefix(while: { $0 != "--" })
        if optionWords.contains("-h") || optionWords.contains("--help") {
            console.out(HelpFormatter.help(for: command))
            return
        }
        let parsed = try ArgumentParser.parse(rest, options: command.options, command: command.commandPath)
        let missing = command.options.filter { $0.required && parsed.value($0.key) == nil }
        if !missing.isEmpty {
            let names = missing.map { "'\($0.key) \($0.valueName ?? "")'" }.joined(separator: ", ")
            throw .usage("Missing expected argument\(missing.count == 1 ? "" : "s") \(names).", command.commandPath)
        }
        guard let body = command.body else {
            try await serverSide.run(command, parsed, words: arguments, console: console)
            return
        }
        let instance = try body.init(parsed, console: console)
        try await instance.run(console: console)
    }

    /// The command named by the leading words, and the arguments after them. A `nil` command
    /// with a match means a group name without a known subcommand.
    private static func resolve(_ arguments: [String]) -> ((any CommandSpec.Type)?, [String])? {
        let matches = commands.filter { Array(arguments.prefix($0.path.count)) == $0.path }
        if let best = matches.max(by: { $0.path.count < $1.path.count }) {
            return (best, Array(arguments.dropFirst(best.path.count)))
        }
        if commands.contains(where: { $0.path.count > 1 && $0.path[0] == arguments[0] }) {
            return (nil, Array(arguments.dropFirst()))
        }
        return nil
    }

    private static func help(for words: [String]) throws(CLIError) -> String {
        if words.isEmpty {
            return HelpFormatter.rootHelp(groups: groups)
        }
        if words == ["--man"] {
            return ManualPage.roff(tree: tree)
        }
        if let command = commands.first(where: { $0.path == words }) {
            return HelpFormatter.help(for: command)
        }
        let members = commands.filter { $0.path.count > 1 && $0.path[0] == words[0] }
        if words.count == 1, !members.isEmpty {
            return HelpFormatter.groupHelp(name: words[0], abstract: groupAbstracts[words[0]] ?? "", commands: members)
        }
        throw CLIError(.usage, "Unknown subcommand '\(words.joined(separator: " "))'. See 'cupcake --help'.")
    }
}
