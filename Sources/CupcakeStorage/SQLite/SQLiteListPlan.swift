/// The SQL for one shape of list query, composed only from constant fragments: which filters
/// are present, the sort, and the index that serves them. Values are bound by name.
struct SQLiteListPlan {
    let select: SQLText
    let count: SQLText

    /// - Parameter walkSortIndex: for a name-prefix query sorted by something other than name,
    ///   walk the sort's index and filter (cheap when many names match) instead of taking the
    ///   name range and sorting it (cheap when few do). ``SQLiteOrderStore`` decides from the
    ///   match count.
    /// - Parameter rangeOfStatuses: for a time-sorted query filtered by status alone, take the
    ///   statuses' ranges of the status index and sort them (cheap when few orders match)
    ///   instead of walking every order by time.
    init(_ query: OrderQuery, walkSortIndex: Bool = false, rangeOfStatuses: Bool = false) {
        var filters = SQLText("WHERE 1 = 1")
        if query.namePrefix != nil {
            filters += SQLText("AND name_key >= :prefix_low AND name_key < :prefix_high")
        }
        if query.type != nil {
            filters += SQLText("AND type = :type")
        }
        switch query.favorite {
        // Literal, not bound: the partial index of favourites can only be used when the
        // planner sees `is_favorite = 1` in the text.
        case true?: filters += SQLText("AND is_favorite = 1")
        case false?: filters += SQLText("AND is_favorite = 0")
        case nil: break
        }
        if query.filtersStatus {
            // One parameter per status; those not filtered on stay NULL, which matches nothing.
            filters += SQLText("AND status IN (:status_0, :status_1, :status_2, :status_3, :status_4)")
            // Literal, so the planner can match the status index, which leaves placed orders out.
            if !query.statuses.contains(.placed) { filters += SQLText("AND status <> 'placed'") }
        }
        // Keyset paging: just after the position, in the sort's direction, on the same index
        // the sort walks (a row-value range, which SQLite seeks to).
        if query.after != nil {
            switch (query.sort.key, query.sort.descending) {
            case (.createdAt, false): filters += SQLText("AND id > :after_id")
            case (.createdAt, true): filters += SQLText("AND id < :after_id")
            case (.name, false): filters += SQLText("AND (name_key, id) > (:after_value, :after_id)")
            case (.name, true): filters += SQLText("AND (name_key, id) < (:after_value, :after_id)")
            case (.cost, false): filters += SQLText("AND (cost_cents, id) > (:after_value, :after_id)")
            case (.cost, true): filters += SQLText("AND (cost_cents, id) < (:after_value, :after_id)")
            case (.type, false): filters += SQLText("AND (type, id) > (:after_value, :after_id)")
            case (.type, true): filters += SQLText("AND (type, id) < (:after_value, :after_id)")
            }
        }

        // The index that serves the filter (a range scan), or else the sort (an ordered walk).
        // Time sorts walk the primary key: ids are in placement order and created_at_ms never
        // decreases along them (SQLiteOrderStore keeps it so).
        let byTime = query.sort.key == .createdAt
        let source: SQLText
        if rangeOfStatuses {
            source = SQLText("FROM orders INDEXED BY orders_by_status")
        } else if query.namePrefix != nil && !walkSortIndex {
            source = SQLText("FROM orders INDEXED BY orders_by_name")
        } else if query.namePrefix != nil && byTime {
            source = SQLText("FROM orders NOT INDEXED")
        } else if query.favorite == true && byTime {
            source = SQLText("FROM orders INDEXED BY orders_favorites")
        } else if query.type != nil && byTime {
            source = SQLText("FROM orders INDEXED BY orders_by_type")
        } else if byTime {
            source = SQLText("FROM orders NOT INDEXED")
        } else if query.sort.key == .name {
            source = SQLText("FROM orders INDEXED BY orders_by_name")
        } else if query.sort.key == .cost {
            source = SQLText("FROM orders INDEXED BY orders_by_cost")
        } else if query.sort.key == .type {
            source = SQLText("FROM orders INDEXED BY orders_by_type")
        } else {
            source = SQLText("FROM orders")
        }

        let order = query.sort.orderBy

        select =
            SQLText("SELECT") + OrderColumn.selectList + source + filters + order
            + SQLText("LIMIT :limit OFFSET :offset")

        // Totals without a name filter come from OrderCounts in memory; with one, the matches
        // are counted in the name index (a covering range scan).
        count = SQLText("SELECT count(*) FROM orders INDEXED BY orders_by_name") + filters
    }

    /// Binds the query's values to whichever named parameters the statement has.
    func bind(_ statement: SQLiteStatement, _ query: OrderQuery, window: Bool) {
        if let prefix = query.namePrefix {
            let low = Array(OrderQuery.nameKey(prefix).utf8)
            statement.bind(statement.parameter(":prefix_low"), text: low)
            statement.bind(statement.parameter(":prefix_high"), text: Self.upperBound(low))
        }
        if let type = query.type {
            statement.bind(statement.parameter(":type"), type)
        }
        if query.filtersStatus {
            for (index, status) in query.statusList.enumerated() {
                statement.bind(statement.parameter(":status_\(index)"), status.wireName)
            }
        }
        if let after = query.after {
            statement.bind(statement.parameter(":after_id"), after.id)
            switch after.value {
            case .text(let text): statement.bind(statement.parameter(":after_value"), text: Array(text.utf8))
            case .number(let number): statement.bind(statement.parameter(":after_value"), number)
            case .none: break
            }
        }
        if window {
            // One more than the page, to tell whether another page follows.
            statement.bind(statement.parameter(":limit"), query.limit + 1)
            statement.bind(statement.parameter(":offset"), query.after == nil ? query.offset : 0)
        }
    }

    /// The smallest byte string greater than every string that starts with `prefix` (text
    /// compares as bytes): the prefix with its last byte raised by one. UTF-8 never holds 0xFF,
    /// so there is no carry; an empty prefix has no upper bound short of "everything".
    static func upperBound(_ prefix: [UInt8]) -> [UInt8] {
        guard let last = prefix.last else { return [0xFF] }
        return prefix.dropLast() + [last + 1]
    }
}
