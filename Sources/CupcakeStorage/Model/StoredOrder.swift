import CupcakeDomain

/// An order as the service keeps it: the normalized order, its id, price and time, and where it
/// is in its life (its status, since when, and a version that changes with every change).
public struct StoredOrder: Sendable, Equatable {
    /// The id; placement order (a later order has a larger id).
    public var id: Int64
    /// The normalized, validated order.
    public var order: Order
    /// The price the server computed, in cents.
    public var costCents: Int
    /// When it was placed, in milliseconds since 1970 UTC.
    public var createdAtMilliseconds: Int64
    /// Whether the shop marked it as a favourite.
    public var isFavorite: Bool
    /// The SHA-256 of its receipt token, when it has one and it was read (``OrderStore/order(id:)``
    /// reads it; lists do not).
    public var receiptHash: [UInt8]?
    /// Where it is in its life.
    public var status: OrderStatus
    /// When it reached that status, in milliseconds since 1970 UTC.
    public var statusChangedAtMilliseconds: Int64
    /// 1 when placed, one more with every change (its status or its favourite mark): what an
    /// `ETag` names, so that a change made meanwhile is noticed.
    public var version: Int64
    /// Every status it has had, oldest first, when it was read (``OrderStore/order(id:)`` reads
    /// it; lists do not).
    public var history: [StatusChange]?

    /// Creates a stored order (a new one: placed, at version 1, unless told otherwise).
    public init(
        id: Int64, order: Order, costCents: Int, createdAtMilliseconds: Int64, isFavorite: Bool = false,
        receiptHash: [UInt8]? = nil, status: OrderStatus = .placed, statusChangedAtMilliseconds: Int64? = nil,
        version: Int64 = 1, history: [StatusChange]? = nil
    ) {
        self.id = id
        self.order = order
        self.costCents = costCents
        self.createdAtMilliseconds = createdAtMilliseconds
        self.isFavorite = isFavorite
        self.receiptHash = receiptHash
        self.status = status
        self.statusChangedAtMilliseconds = statusChangedAtMilliseconds ?? createdAtMilliseconds
        self.version = version
        self.history = history
    }
}

extension StoredOrder {
    /// The order as any client sees it (the id as text).
    public var placed: PlacedOrder {
        PlacedOrder(
            order: order, id: String(id), createdAtMilliseconds: createdAtMilliseconds, costCents: costCents,
            isFavorite: isFavorite)
    }
}

/// An order to insert, with the idempotency key to record in the same transaction.
public struct NewOrder: Sendable {
    /// The normalized, validated order.
    public var order: Order
    /// The price, in cents.
    public var costCents: Int
    /// When it was placed, in milliseconds since 1970 UTC.
    public var createdAtMilliseconds: Int64
    /// The idempotency key to record with it, if the request had one.
    public var idempotency: IdempotencyClaim?
    /// Whether it starts as a favourite (imports and benchmarks; the API always starts false).
    public var isFavorite: Bool
    /// The SHA-256 of the receipt token handed out with it, if any.
    public var receiptHash: [UInt8]?

    /// Creates an order to insert.
    public init(
        order: Order, costCents: Int, createdAtMilliseconds: Int64, idempotency: IdempotencyClaim? = nil,
        isFavorite: Bool = false, receiptHash: [UInt8]? = nil
    ) {
        self.order = order
        self.costCents = costCents
        self.createdAtMilliseconds = createdAtMilliseconds
        self.idempotency = idempotency
        self.isFavorite = isFavorite
        self.receiptHash = receiptHash
    }
}

/// A request's Idempotency-Key, the fingerprint of what it asked, and how to render the answer
/// to store for replays (rendered inside the transaction, once the id is known).
public struct IdempotencyClaim: Sendable {
    /// The client's key.
    public var key: String
    /// What identifies the request's content (the normalized order's JSON).
    public var fingerprint: [UInt8]
    /// The HTTP status to replay.
    public var status: Int
    /// Renders the body to replay from the stored order.
    public var render: @Sendable (StoredOrder) -> [UInt8]

    /// Creates a claim.
    public init(key: String, fingerprint: [UInt8], status: Int, render: @escaping @Sendable (StoredOrder) -> [UInt8]) {
        self.key = key
        self.fingerprint = fingerprint
        self.status = status
        self.render = render
    }
}

/// A stored answer to an idempotent request.
public struct IdempotencyRecord: Sendable, Equatable {
    /// The client's key.
    public var key: String
    /// The fingerprint of the first request's content.
    public var fingerprint: [UInt8]
    /// The status first answered.
    public var status: Int
    /// The body first answered.
    public var body: [UInt8]
    /// The order it created.
    public var orderID: Int64
    /// When it was recorded, in milliseconds since 1970 UTC.
    public var createdAtMilliseconds: Int64
}
