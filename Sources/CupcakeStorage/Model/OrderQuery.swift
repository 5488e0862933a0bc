import CupcakeDomain

/// A page of order history: filters, a sort and a window.
public struct OrderQuery: Sendable, Equatable {
    /// The sort keys.
    public enum SortKey: String, Sendable, CaseIterable {
        case createdAt, name, cost, type
    }

    /// A sort key and direction; ties always break by placement order in the same direction.
    public struct Sort: Sendable, Equatable, CustomStringConvertible {
        /// The key.
        public var key: SortKey
        /// Whether it is descending.
        public var descending: Bool

        /// Creates a sort.
        public init(_ key: SortKey, descending: Bool) {
            self.key = key
            self.descending = descending
        }

        /// Parses `createdAt`, `-createdAt`, `name`, `-cost`, …; `nil` for anything else.
        public init?(parameter: String) {
            let descending = parameter.hasPrefix("-")
            guard let key = SortKey(rawValue: descending ? String(parameter.dropFirst()) : parameter) else {
                return nil
            }
            self.init(key, descending: descending)
        }

        /// Newest placed first: the default, and `PlacedOrder`'s natural order.
        public static let newestFirst = Sort(.createdAt, descending: true)

        public var description: String { (descending ? "-" : "") + key.rawValue }
    }

    /// Where a page begins in the sort: just after the order with this sort value and id.
    /// Used instead of an offset to go on from a page (a cursor), so that a page deep in the
    /// list costs an index seek, not a scan of everything before it.
    public struct Position: Sendable, Equatable {
        /// The sort key's value of the last order seen: its name key for `name`, its cost in
        /// cents for `cost`, its type for `type`, nothing for `createdAt` (the id is the order).
        public enum Value: Sendable, Equatable {
            case text(String)
            case number(Int)
            case none
        }

        /// The value.
        public var value: Value
        /// The id of the last order seen (the tie-break).
        public var id: Int64

        /// Creates a position.
        public init(value: Value, id: Int64) {
            self.value = value
            self.id = id
        }

        /// The position just after `order` in `sort`.
        public init(after order: StoredOrder, in sort: Sort) {
            switch sort.key {
            case .createdAt: value = .none
            case .name: value = .text(OrderQuery.nameKey(order.order.name))
            case .cost: value = .number(order.costCents)
            case .type: value = .number(order.order.type)
            }
            id = order.id
        }
    }

    /// Names beginning with this, case-insensitively; pattern characters are literal.
    public var namePrefix: String?
    /// Only this cake type.
    public var type: Int?
    /// Only favourites (`true`) or only the others (`false`).
    public var favorite: Bool?
    /// Only orders in these statuses; by default every status but cancelled.
    public var statuses: Set<OrderStatus>
    /// The order of the list.
    public var sort: Sort
    /// At most this many orders.
    public var limit: Int
    /// Skip this many first.
    public var offset: Int
    /// Begin after this position instead (then `offset` is 0).
    public var after: Position?

    /// Creates a query.
    public init(
        namePrefix: String? = nil, type: Int? = nil, favorite: Bool? = nil,
        statuses: Set<OrderStatus> = OrderQuery.defaultStatuses, sort: Sort = .newestFirst, limit: Int = 6,
        offset: Int = 0
    ) {
        self.namePrefix = namePrefix
        self.type = type
        self.favorite = favorite
        self.statuses = statuses
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }

    /// Every status but cancelled: what a list shows unless asked otherwise.
    public static let defaultStatuses = Set(OrderStatus.allCases).subtracting([.cancelled])

    /// Whether the status filter leaves any status out.
    var filtersStatus: Bool { statuses.count < OrderStatus.allCases.count }

    /// The statuses filtered on, in their life's order (for SQL parameters and cursors).
    var statusList: [OrderStatus] { OrderStatus.allCases.filter(statuses.contains) }

    /// The key a name is matched and sorted by: lower-cased with Unicode's full rules.
    public static func nameKey(_ name: String) -> String {
        // Most names are ASCII: lower-case those bytes directly (this runs for every order stored),
        // and leave the rest to Swift's full Unicode lower-casing.
        let isUpper = { (byte: UInt8) in byte >= 0x41 && byte <= 0x5A }
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else { return name.lowercased() }
        guard name.utf8.contains(where: isUpper) else { return name }
        return String(decoding: name.utf8.map { isUpper($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}

/// One page of orders and the number of orders matching the filters.
public struct OrderPage: Sendable, Equatable {
    /// The orders on the page, in the query's order.
    public var orders: [StoredOrder]
    /// How many orders match the filters in all.
    public var total: Int
    /// Whether more orders follow this page.
    public var hasMore: Bool

    /// Creates a page.
    public init(orders: [StoredOrder], total: Int, hasMore: Bool = false) {
        self.orders = orders
        self.total = total
        self.hasMore = hasMore
    }
}
