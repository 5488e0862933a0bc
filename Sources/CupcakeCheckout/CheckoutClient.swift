import CupcakeDomain
import FoundationEssentials

/// Places orders with an endpoint.
///
/// Each order is one POST with a fresh Idempotency-Key that every retry repeats, so a retry never
/// places the order twice.
public final class CheckoutClient: Sendable {
    private let transport: Transport

    /// The configuration in use.
    public var configuration: CheckoutConfiguration { transport.configuration }

    /// Creates a client and its session.
    public init(configuration: CheckoutConfiguration) {
        transport = Transport(configuration: configuration)
    }

    /// Posts the order and returns the endpoint's confirmation.
    ///
    /// - Parameters:
    ///   - order: a validated order.
    ///   - idempotencyKey: sent on every attempt.
    ///   - events: told about attempts and waits.
    /// - Throws: ``CheckoutError`` with the code the CLI maps to an exit status.
    public func place(
        _ order: Order, idempotencyKey: String, events: @Sendable (TransportEvent) -> Void = { _ in }
    ) async throws(CheckoutError) -> Confirmation {
        var request = transport.request("POST", configuration.endpoint, body: Data(order.wireJSON))
        request.setHeader("Idempotency-Key", idempotencyKey)
        let answer = try await transport.send(request, events: events)
        return try Confirmation.decode(answer.data, sent: order)
    }
}
