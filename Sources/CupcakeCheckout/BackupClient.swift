import CupcakeDomain
import FoundationEssentials

/// Downloads a consistent copy of a running `cupcake serve`'s database (`GET …/api/backup`, the
/// order endpoint's sibling), with the same transport, retries and credentials as placing an
/// order. The body goes to a file as it arrives, never wholly into memory.
public final class BackupClient: Sendable {
    private let transport: Transport

    /// Creates a client.
    public init(configuration: CheckoutConfiguration) {
        transport = Transport(configuration: configuration, staff: true)
    }

    /// Where the backup is asked for: `…/api/cupcakes` gives `…/api/backup`.
    public var url: URL {
        transport.configuration.endpoint.deletingLastPathComponent().appendingPathComponent("backup")
    }

    /// Downloads the copy into `destination`, an existing file whose contents it replaces.
    ///
    /// - Throws: ``CheckoutError`` as for an order; a 404 means the server makes no backups.
    public func download(into destination: URL, events: @Sendable (TransportEvent) -> Void = { _ in })
        async throws(CheckoutError)
    {
        var request = transport.request("GET", url)
        request.setHeader("Accept", "application/vnd.sqlite3")
        _ = try await transport.send(request, destination: destination, events: events)
    }
}
