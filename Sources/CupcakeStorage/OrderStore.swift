/// Where orders live. The HTTP handlers talk only to this protocol, so another engine (say
/// PostgreSQL) can be added without touching them. Every method is safe to call from any thread.
/// The webhooks' state lives beside the orders (``WebhookStore``).
public protocol OrderStore: WebhookStore {
    /// A human description of where the data is, for the startup line.
    var location: String { get }

    /// What an acknowledged order survives, in words for the startup line.
    var durability: String { get }

    /// The store's backups, when it can make them while it takes orders (nil: back it up with
    /// the engine's own tools).
    var backups: (any OrderBackup)? { get }

    /// How many batches ``GroupCommitter`` may insert at once, each on its own thread. One unless
    /// the engine takes concurrent writers (SQLite has one writer; PostgreSQL has many).
    var concurrentWriters: Int { get }

    /// Inserts a batch in one transaction, with each order's idempotency record; when it
    /// returns, the batch is committed.
    ///
    /// - Returns: the stored orders, in the batch's order.
    func insert(_ batch: [NewOrder]) throws(StorageError) -> [StoredOrder]

    /// The order with this id (cancelled ones too), with its ``StoredOrder/history`` when
    /// `history` is true.
    func order(id: Int64, history: Bool) throws(StorageError) -> StoredOrder?

    /// One page of orders matching the query, and how many match in all.
    func list(_ query: OrderQuery) throws(StorageError) -> OrderPage

    /// Changes an order's favourite mark or status in one transaction: the status move is
    /// checked against the order's status as it is then (so of two moves of one order at once,
    /// one wins and the other is refused), and a status change is written to the order's
    /// history in the same transaction. The order in the outcome carries its history.
    func change(id: Int64, _ change: OrderChange) throws(StorageError) -> OrderChangeOutcome

    /// The events after `position`, oldest first, at most `limit`; of one order when `orderID` is
    /// given. Only events no earlier one can still join (see ``EventPosition``).
    func events(after position: EventPosition, orderID: Int64?, limit: Int) throws(StorageError) -> [OrderEvent]

    /// The log's end now: where a reader that wants only what comes next begins.
    func latestEventPosition() throws(StorageError) -> EventPosition

    /// How many orders exist (not counting cancelled ones).
    func orderCount() throws(StorageError) -> Int

    /// The stored answer for an Idempotency-Key, if any.
    func idempotencyRecord(key: String) throws(StorageError) -> IdempotencyRecord?

    /// Claims an Idempotency-Key for one request, so that no other request (on any instance
    /// sharing the database) stores an order with it meanwhile.
    ///
    /// - Returns: ``IdempotencyClaimResult/claimed`` (insert the order with the key, then
    ///   ``releaseIdempotencyKey(_:committed:)``), ``IdempotencyClaimResult/inFlight``, or the
    ///   answer already stored for it.
    func claimIdempotencyKey(_ key: String, fingerprint: [UInt8], nowMilliseconds: Int64) throws(StorageError)
        -> IdempotencyClaimResult

    /// Gives a claimed key up: after its order committed (`committed`), or after it failed, so
    /// that a retry may claim it again.
    func releaseIdempotencyKey(_ key: String, committed: Bool)

    /// Forgets idempotency keys recorded before a time; returns how many.
    @discardableResult
    func purgeIdempotencyKeys(recordedBefore milliseconds: Int64) throws(StorageError) -> Int

    /// Closes the store; later calls fail with ``StorageError/Code/unavailable``.
    func close()

    /// Whether the store can take orders now: `nil` when it can, else why not, in words fit to
    /// show anyone (no host names or SQL), for a readiness probe.
    func readiness() -> String?

    /// Loads many orders fast, for benchmarks and imports: `batchSize` to a transaction,
    /// calling `progress` with the number loaded after each.
    func bulkInsert(count: Int, batchSize: Int, make: (Int) -> NewOrder, progress: (Int) -> Void)
        throws(StorageError)
}

extension OrderStore {
    /// The order with this id (cancelled ones too), without its history.
    public func order(id: Int64) throws(StorageError) -> StoredOrder? { try order(id: id, history: false) }

    /// One writer, unless the engine says otherwise.
    public var concurrentWriters: Int { 1 }

    /// An open store is ready, unless the engine says otherwise.
    public func readiness() -> String? { nil }

    /// No backups of its own, unless the engine says otherwise.
    public var backups: (any OrderBackup)? { nil }

    /// Inserts `count` made orders, `batchSize` to a transaction, calling `progress` with the
    /// number loaded after each (the engines' bulk loaders).
    func insertInBatches(count: Int, batchSize: Int, make: (Int) -> NewOrder, progress: (Int) -> Void)
        throws(StorageError)
    {
        var loaded = 0
        while loaded < count {
            let size = min(batchSize, count - loaded)
            let first = loaded
            _ = try insert((first..<first + size).map(make))
            loaded += size
            progress(loaded)
        }
    }
}
