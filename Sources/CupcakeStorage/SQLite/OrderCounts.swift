import CupcakeDomain

/// How many orders there are per (type, favourite, status): the totals of every list page without a
/// name filter, answered from memory instead of a COUNT over the table.
///
/// Counted once when the store opens, then kept by the store as it commits, so a commit writes
/// no counter rows (one page fewer for every group commit). The SQLite engine assumes one
/// process owns its file; several servers on one database is a job for another engine.
struct OrderCounts: Sendable {
    private struct Key: Hashable, Sendable {
        var type: Int
        var favorite: Bool
        var status: OrderStatus
    }

    private var counts: [Key: Int] = [:]

    mutating func add(type: Int, favorite: Bool, status: OrderStatus, _ delta: Int) {
        counts[Key(type: type, favorite: favorite, status: status), default: 0] += delta
    }

    mutating func add(_ other: OrderCounts) {
        for (key, delta) in other.counts { counts[key, default: 0] += delta }
    }

    /// Orders matching the filters (`nil` means any).
    func total(type: Int? = nil, favorite: Bool? = nil, statuses: Set<OrderStatus>? = nil) -> Int {
        counts.reduce(0) { sum, entry in
            let (key, count) = entry
            guard type.map({ $0 == key.type }) ?? true, favorite.map({ $0 == key.favorite }) ?? true,
                statuses.map({ $0.contains(key.status) }) ?? true
            else { return sum }
            return sum + count
        }
    }

    /// Counts the table (once, when the store opens).
    static func load(_ connection: SQLiteConnection) throws(StorageError) -> OrderCounts {
        var counts = OrderCounts()
        try connection.withStatement(
            "SELECT type, is_favorite, status, count(*) FROM orders GROUP BY type, is_favorite, status"
        ) { query throws(StorageError) in
            while try query.step() {
                let status = OrderStatus(wireName: query.string(2)) ?? .placed
                counts.add(type: query.int(0), favorite: query.bool(1), status: status, query.int(3))
            }
        }
        return counts
    }
}
