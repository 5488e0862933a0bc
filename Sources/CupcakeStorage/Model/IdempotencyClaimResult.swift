/// What claiming an Idempotency-Key found (``OrderStore/claimIdempotencyKey(_:fingerprint:nowMilliseconds:)``).
public enum IdempotencyClaimResult: Sendable, Equatable {
    /// The key is this request's now: store the order with it, then release it.
    case claimed
    /// Another request with the key is still being handled (409; the client retries).
    case inFlight
    /// The key has been used: its stored answer, to replay or (another order) to refuse.
    case used(IdempotencyRecord)
}
