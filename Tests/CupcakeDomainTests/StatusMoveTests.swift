import CupcakeDomain
import Testing

@Suite struct StatusMoveTests {
    /// The moves the model allows, written out as the rules say them (not derived from the
    /// code): one step forward by the staff; placed → cancelled by either; baking or out for
    /// delivery → cancelled by the staff, with a reason. Every other (from, to, who) is refused.
    static let allowed: Set<Triple> = [
        Triple(.placed, .baking, .staff),
        Triple(.baking, .outForDelivery, .staff),
        Triple(.outForDelivery, .delivered, .staff),
        Triple(.placed, .cancelled, .customer),
        Triple(.placed, .cancelled, .staff),
        Triple(.baking, .cancelled, .staff),
        Triple(.outForDelivery, .cancelled, .staff),
    ]

    struct Triple: Hashable, Sendable, CustomTestStringConvertible {
        var from: OrderStatus
        var to: OrderStatus
        var actor: OrderActor
        init(_ from: OrderStatus, _ to: OrderStatus, _ actor: OrderActor) {
            self.from = from
            self.to = to
            self.actor = actor
        }
        var testDescription: String { "\(from.wireName) → \(to.wireName) by \(actor.rawValue)" }
    }

    /// Every (from, to, who): 50 cases.
    static let everyTriple: [Triple] = OrderStatus.allCases.flatMap { from in
        OrderStatus.allCases.flatMap { to in OrderActor.allCases.map { Triple(from, to, $0) } }
    }

    @Test(arguments: everyTriple)
    func eachMoveIsAllowedExactlyAsTheRulesSay(_ triple: Triple) {
        let move = StatusMove(to: triple.to, by: triple.actor, reason: "oven broke")
        let refusal = move.refusal(from: triple.from)
        if Self.allowed.contains(triple) {
            #expect(refusal == nil)
            #expect(StatusMove.allowedTargets(from: triple.from, by: triple.actor).contains(triple.to))
        } else {
            #expect(refusal != nil)
            #expect(refusal?.isConflict == true)
            #expect(!StatusMove.allowedTargets(from: triple.from, by: triple.actor).contains(triple.to))
        }
    }

    @Test(arguments: [OrderStatus.baking, .outForDelivery])
    func cancellingAStartedOrderNeedsAReason(_ from: OrderStatus) {
        for reason in [nil, "", "   ", "\u{200B}"] {
            #expect(
                StatusMove(to: .cancelled, by: .staff, reason: reason).refusal(from: from)
                    == .reasonRequired(from: from))
        }
        #expect(StatusMove(to: .cancelled, by: .staff, reason: " burnt ").reason == "burnt")
        #expect(StatusMove(to: .cancelled, by: .staff, reason: "burnt").refusal(from: from) == nil)
    }

    @Test func aPlacedOrderIsCancelledWithoutAReason() {
        #expect(StatusMove(to: .cancelled, by: .customer).refusal(from: .placed) == nil)
        #expect(StatusMove(to: .cancelled, by: .staff).refusal(from: .placed) == nil)
        #expect(
            StatusMove(to: .cancelled, by: .customer).refusal(from: .baking)
                == .notAllowed(from: .baking, to: .cancelled, by: .customer))
    }

    @Test func refusalsSayWhy() {
        #expect(StatusMove(to: .baking, by: .staff).refusal(from: .delivered) == .final(.delivered))
        #expect(StatusMove(to: .baking, by: .staff).refusal(from: .baking) == .alreadyThere(.baking))
        #expect(StatusMove(to: .delivered, by: .staff).refusal(from: .placed)?.code == "status_move_not_allowed")
        let long = String(repeating: "x", count: StatusMove.maximumReasonLength + 1)
        #expect(
            StatusMove(to: .cancelled, by: .staff, reason: long).refusal(from: .baking) == .reasonTooLong(limit: 200))
        for unsafe in ["oven\nbroke", "\u{202E}ekorb", "bell\u{7}", "a\u{2028}b"] {
            let refusal = StatusMove(to: .cancelled, by: .staff, reason: unsafe).refusal(from: .baking)
            #expect(refusal == .reasonUnsafe, "\(unsafe.debugDescription)")
            #expect(refusal?.isConflict == false)
        }
    }

    @Test func theLifeRunsForwardOneStepAtATime() {
        var status = OrderStatus.placed
        var seen = [status]
        while let next = status.next {
            status = next
            seen.append(status)
        }
        #expect(seen == [.placed, .baking, .outForDelivery, .delivered])
        #expect(OrderStatus.allCases.filter(\.isFinal) == [.delivered, .cancelled])
        #expect(OrderStatus(wireName: "out_for_delivery") == .outForDelivery)
        #expect(OrderStatus(wireName: "Baking") == nil)
    }
}
