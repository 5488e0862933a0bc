import CupcakeCLI
import CupcakeCheckout
import CupcakeStorage
import Foundation

/// `cupcake backup`'s work: downloads the copy beside the file, checks it, renames it into place.
struct BackupCommandBody: CommandBody {
    /// The backup's path, made absolute.
    var file: String
    var endpointFlags: CheckoutConfiguration.Flags

    init(_ arguments: ParsedArguments, console: Console) throws(CLIError) {
        try arguments.expectNoPositionals()
        guard let to = arguments.value("--to"), !to.isEmpty else {
            throw .usage("Missing expected argument '--to <file>'.", arguments.command)
        }
        file = URL(fileURLWithPath: to).path
        endpointFlags = try EndpointOptions.flags(arguments)
        if endpointFlags.timeoutSeconds == nil { endpointFlags.timeoutSeconds = BackupCommand.defaultTimeout }
    }

    func run(console: Console) async throws(CLIError) {
        let client = BackupClient(configuration: try EndpointOptions.configuration(endpointFlags, console: console))
        let partial: String
        do {
            partial = try PrivateFiles.create(beside: file)
        } catch {
            throw CLIError(.cannotCreate, error.description)
        }
        var keep = false
        defer { if !keep { unlink(partial) } }
        do {
            try await client.download(into: URL(fileURLWithPath: partial))
        } catch {
            throw EndpointOptions.cliError(error)
        }
        let orders: Int
        do {
            orders = try OrderStores.verifyBackup(at: partial)
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
            fromByteCount: Int64((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0),
            countStyle: .file)
        console.print("Backup of \(orders) order\(orders == 1 ? "" : "s") written to \(file) (\(size)).")
    }
}
