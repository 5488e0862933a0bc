/// Why an order was not placed. Each code maps to one exit status in the CLI.
public struct CheckoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Sendable, Equatable {
        /// The endpoint could not be reached (refused, DNS); exit 69.
        case unreachable
        /// Timed out, or still failing after the retries; exit 75.
        case temporary
        /// 401 or 403; exit 77.
        case unauthorized
        /// 403 to a key that is right but may not do this (the app key listing orders); exit 77.
        case forbidden
        /// 400 or 422: the endpoint refused the order; exit 65.
        case rejected
        /// An answer that is not the expected JSON; exit 76.
        case protocolError
        /// The configuration is unusable; exit 78.
        case configuration
        /// No order with that id; exit 66.
        case notFound
        /// The order's status does not allow the change (409); exit 65.
        case refused
        /// The order changed while the change was being made (412); exit 75, run it again.
        case changed
    }

    /// The kind of failure.
    public var code: Code
    /// One clear line for the person.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
