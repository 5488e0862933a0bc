import CupcakeCheckout
import CupcakeStorage
import Foundation

/// `cupcake backup --to FILE`: a consistent copy of a running server's database, taken while it
/// keeps taking orders, written atomically with mode 0600.
struct BackupCommand: Command {
    static let path = ["backup"]
    static let abstract = "Save a consistent copy of a running server's database."
    static let usageArguments = "--to <file> [--endpoint <url>] [--api-key <key>]"
    static let discussion: String? = """
        The server makes the copy while it keeps taking orders; it holds every order acknowledged
        before the backup began. The file is checked (SQLite's integrity_check) before it
        replaces FILE. Restore by starting a server on it: cupcake serve --database FILE.
        """
    /// Seconds one attempt may take unless --timeout says otherwise: a big database takes a
    /// while to copy before its first byte is sent.
    static let defaultTimeout = 600.0
    static let options: [OptionSpec] =
        [.value("--to", valueName: "<file>", help: "Where to write the copy (replaced atomically, mode 0600).")]
        + EndpointOptions.specs.map { spec in
            var spec = spec
            if spec.key == "--timeout" { spec.defaultValue = String(Int(defaultTimeout)) }
            return spec
        }

    var file: URL
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        guard let to = arguments.value("--to"), !to.isEmpty else {
            throw .usage("Missing expected argument '--to <file>'.", arguments.command)
        }
        file = URL(fileURLWithPath: to)
        endpointFlags = try EndpointOptions.flags(arguments)
        if endpointFlags.timeoutSeconds == nil { endpointFlags.timeoutSeconds = Self.defaultTimeout }
    }

    func run(console: Console) async throws(CLIError) {
        let client = BackupClient(configuration: try EndpointOptions.configuration(endpointFlags, console: console))
        let partial: URL
        do {
            partial = try PrivateFiles.create(beside: file)
        } catch {
            throw CLIError(.cannotCreate, error.description)
        }
        var keep = false
        defer { if !keep { unlink(partial.path) } }
        do {
            try await client.download(into: partial)
        } catch {
            throw EndpointOptions.cliError(error)
        }
        let orders: Int
        do {
            orders = try SQLiteOrderStore.verify(path: partial.path)
        } catch {
            throw CLIError(
                .protocol,
                "The answer from \(CheckoutConfiguration.display(client.url)) is not a usable database: \(error.message)."
            )
        }
        do {
            try PrivateFiles.replace(file, with: partial)
        } catch {
            throw CLIError(.cannotCreate, error.description)
        }
        keep = true
        let size = ByteCountFormatter.string(
            fromByteCount: Int64((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0),
            countStyle: .file)
        console.print("Backup of \(orders) order\(orders == 1 ? "" : "s") written to \(file.path) (\(size)).")
    }
}
