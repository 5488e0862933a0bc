/// A request to move an order to another status, and the one set of rules every path (the API,
/// the CLI, the page) checks it against:
///
/// - one step forward (placed → baking → out for delivery → delivered), by the staff;
/// - placed → cancelled, by the customer or the staff, a reason optional;
/// - baking or out for delivery → cancelled, by the staff only, with a reason;
/// - nothing after delivered or cancelled.
public struct StatusMove: Sendable, Hashable {
    /// The status asked for.
    public var target: OrderStatus
    /// Who asks.
    public var actor: OrderActor
    /// Why (required to cancel an order the kitchen has started), trimmed; nil when blank.
    public var reason: String?

    /// The longest reason kept, in characters.
    public static let maximumReasonLength = 200

    /// Creates a move; a blank reason counts as none.
    public init(to target: OrderStatus, by actor: OrderActor, reason: String? = nil) {
        self.target = target
        self.actor = actor
        let trimmed = reason.map(Order.trimmed)
        self.reason = trimmed.flatMap { TextSafety.isBlank($0) ? nil : $0 }
    }

    /// Why the move cannot be made from `current`, or nil when it can.
    public func refusal(from current: OrderStatus) -> StatusMoveRefusal? {
        if let reasonRefusal { return reasonRefusal }
        if current.isFinal { return .final(current) }
        if target == current { return .alreadyThere(current) }
        if target == .cancelled {
            if current == .placed { return nil }
            if actor != .staff { return .notAllowed(from: current, to: target, by: actor) }
            return reason == nil ? .reasonRequired(from: current) : nil
        }
        guard current.next == target else { return .notAllowed(from: current, to: target, by: actor) }
        return actor == .staff ? nil : .notAllowed(from: current, to: target, by: actor)
    }

    /// What is wrong with the reason itself, whatever the order's status: too long, or holding
    /// characters that must not be shown as they are.
    public var reasonRefusal: StatusMoveRefusal? {
        guard let reason else { return nil }
        if reason.unicodeScalars.count > Self.maximumReasonLength {
            return .reasonTooLong(limit: Self.maximumReasonLength)
        }
        if reason.unicodeScalars.contains(where: TextSafety.mustEscape) { return .reasonUnsafe }
        return nil
    }

    /// The statuses `actor` may move an order to from `current` (cancelling from baking or
    /// out for delivery needs a reason as well).
    public static func allowedTargets(from current: OrderStatus, by actor: OrderActor) -> [OrderStatus] {
        OrderStatus.allCases.filter { target in
            // A placeholder reason: what is asked here is whether the move itself is allowed.
            StatusMove(to: target, by: actor, reason: "reason").refusal(from: current) == nil
        }
    }

    /// The change it makes, at `milliseconds`.
    public func change(at milliseconds: Int64) -> StatusChange {
        StatusChange(status: target, atMilliseconds: milliseconds, actor: actor, reason: reason)
    }
}

/// Why a status move was refused, as data: a code for programs and a sentence for people.
public enum StatusMoveRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The order is delivered or cancelled already.
    case final(OrderStatus)
    /// The order already has that status.
    case alreadyThere(OrderStatus)
    /// That move is not one the model allows (or not for that actor).
    case notAllowed(from: OrderStatus, to: OrderStatus, by: OrderActor)
    /// Cancelling an order the kitchen has started needs a reason.
    case reasonRequired(from: OrderStatus)
    /// The reason is longer than the limit.
    case reasonTooLong(limit: Int)
    /// The reason holds control characters, bidi formatting or line separators.
    case reasonUnsafe

    /// A stable code: `status_final`, `status_unchanged`, `status_move_not_allowed`,
    /// `reason_required`, `reason_too_long`, `reason_unsafe`.
    public var code: String {
        switch self {
        case .final: "status_final"
        case .alreadyThere: "status_unchanged"
        case .notAllowed: "status_move_not_allowed"
        case .reasonRequired: "reason_required"
        case .reasonTooLong: "reason_too_long"
        case .reasonUnsafe: "reason_unsafe"
        }
    }

    /// Whether it is about the order's current status (a conflict: 409) rather than the request
    /// itself (a bad reason: 422).
    public var isConflict: Bool {
        switch self {
        case .final, .alreadyThere, .notAllowed, .reasonRequired: true
        case .reasonTooLong, .reasonUnsafe: false
        }
    }

    public var description: String {
        switch self {
        case .final(let status): "the order is \(status.title.lowercased()) already; nothing can follow"
        case .alreadyThere(let status): "the order is \(status.title.lowercased()) already"
        case .notAllowed(let from, let to, let actor):
            "\(actor == .customer ? "a customer" : "the staff") cannot move an order from "
                + "\(from.title.lowercased()) to \(to.title.lowercased())"
        case .reasonRequired(let from):
            "cancelling an order that is \(from.title.lowercased()) needs a reason"
        case .reasonTooLong(let limit): "the reason must be at most \(limit) characters"
        case .reasonUnsafe: "the reason must be one line without control characters or bidi formatting"
        }
    }
}
