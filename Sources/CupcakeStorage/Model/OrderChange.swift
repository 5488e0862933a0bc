import CupcakeDomain

/// A change to one order: its favourite mark, its status, or both, made only if the order is
/// still at one of `expectedVersions` when they are given.
public struct OrderChange: Sendable, Equatable {
    /// The favourite mark to set, if any.
    public var favorite: Bool?
    /// The status move to make, if any; checked against the order's status as it is when the
    /// change is made, inside the same transaction.
    public var move: StatusMove?
    /// The versions the caller accepts (an `If-Match`'s); nil to change whatever the version.
    public var expectedVersions: Set<Int64>?
    /// When the change is made, in milliseconds since 1970 UTC.
    public var atMilliseconds: Int64

    /// Creates a change.
    public init(
        favorite: Bool? = nil, move: StatusMove? = nil, expectedVersions: Set<Int64>? = nil, atMilliseconds: Int64
    ) {
        self.favorite = favorite
        self.move = move
        self.expectedVersions = expectedVersions
        self.atMilliseconds = atMilliseconds
    }
}

/// What came of an ``OrderChange``; every case but ``notFound`` carries the order as it now is.
public enum OrderChangeOutcome: Sendable, Equatable {
    /// Made: the order's version moved on (and a status move was written to its history).
    case changed(StoredOrder)
    /// Nothing to do: the order already was as asked (its version did not move).
    case unchanged(StoredOrder)
    /// There is no order with that id.
    case notFound
    /// The order is no longer at the expected version; nothing was changed.
    case versionMismatch(StoredOrder)
    /// The status move is not allowed from the order's status; nothing was changed.
    case refused(StatusMoveRefusal, StoredOrder)

    /// The order as it now is, when there is one.
    public var order: StoredOrder? {
        switch self {
        case .changed(let order), .unchanged(let order), .versionMismatch(let order), .refused(_, let order): order
        case .notFound: nil
        }
    }
}

extension OrderChange {
    /// What the change comes to for an order as it is now: refused, not applicable, or the new
    /// values (status, favourite), the same rule on both engines.
    enum Plan: Equatable {
        case versionMismatch
        case refused(StatusMoveRefusal)
        case unchanged
        case apply(status: OrderStatus, favorite: Bool)
    }

    func plan(status: OrderStatus, favorite current: Bool, version: Int64) -> Plan {
        if let expectedVersions, !expectedVersions.contains(version) { return .versionMismatch }
        var newStatus = status
        if let move {
            // Moving to where it already is is refused too: of two staff moving one order at
            // once, one wins and the other hears that it changed (never a silent success).
            if let refusal = move.refusal(from: status) { return .refused(refusal) }
            newStatus = move.target
        }
        let newFavorite = favorite ?? current
        if newStatus == status && newFavorite == current { return .unchanged }
        return .apply(status: newStatus, favorite: newFavorite)
    }
}
