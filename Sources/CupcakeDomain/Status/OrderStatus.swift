/// Where an order is in its life after checkout: placed, then baking, out for delivery and
/// delivered, one step at a time, or cancelled on the way. ``delivered`` and ``cancelled`` are
/// final.
public enum OrderStatus: String, Sendable, Hashable, CaseIterable, Codable {
    case placed
    case baking
    case outForDelivery = "out_for_delivery"
    case delivered
    case cancelled

    /// The name people read: "Out for delivery".
    public var title: String {
        switch self {
        case .placed: "Placed"
        case .baking: "Baking"
        case .outForDelivery: "Out for delivery"
        case .delivered: "Delivered"
        case .cancelled: "Cancelled"
        }
    }

    /// The one step forward, if there is one.
    public var next: OrderStatus? {
        switch self {
        case .placed: .baking
        case .baking: .outForDelivery
        case .outForDelivery: .delivered
        case .delivered, .cancelled: nil
        }
    }

    /// Whether nothing can follow it.
    public var isFinal: Bool { self == .delivered || self == .cancelled }

    /// The statuses the kitchen still works on, in their order.
    public static let open: [OrderStatus] = [.placed, .baking, .outForDelivery]

    /// The status for its wire name (`out_for_delivery`), or nil.
    public init?(wireName: some StringProtocol) {
        self.init(rawValue: String(wireName))
    }

    /// Its wire name, as JSON and the query string carry it.
    public var wireName: String { rawValue }

    /// Every wire name, in the order of an order's life, for messages: "placed, baking, …".
    public static var wireNames: String { allCases.map(\.wireName).joined(separator: ", ") }
}
