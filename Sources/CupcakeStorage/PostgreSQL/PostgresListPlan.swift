import CPostgres

/// The SQL for one shape of list query on PostgreSQL, composed only from constant fragments.
/// Every plan takes the same eight parameters, declared with their types when prepared, and uses
/// those its filters need: $1 and $2 the name range, $3 the type, $4 or $5 the cursor's sort
/// value and $6 its id, $7 the limit (one more than the page), $8 the offset, $9 the statuses.
struct PostgresListPlan {
    let select: SQLText
    let count: SQLText

    /// The parameters' types: text, text, integer, text, bigint, bigint, integer, integer, text[].
    static let types: [Oid] = [25, 25, 23, 25, 20, 20, 23, 23, 1009]

    init(_ query: OrderQuery) {
        var filters = SQLText("WHERE true")
        if query.namePrefix != nil {
            filters += SQLText(#"AND name_key >= ($1 COLLATE "C") AND name_key < ($2 COLLATE "C")"#)
        }
        if query.type != nil { filters += SQLText("AND type = $3") }
        switch query.favorite {
        // Literal, so the planner can match the partial index of favourites.
        case true?: filters += SQLText("AND is_favorite")
        case false?: filters += SQLText("AND NOT is_favorite")
        case nil: break
        }
        if query.filtersStatus {
            filters += SQLText("AND status = ANY($9)")
            // Literal, so the planner can match the status index, which leaves placed orders out.
            if !query.statuses.contains(.placed) { filters += SQLText("AND status <> 'placed'") }
        }
        let counted = filters
        if query.after != nil {
            switch (query.sort.key, query.sort.descending) {
            case (.createdAt, false): filters += SQLText("AND id > $6")
            case (.createdAt, true): filters += SQLText("AND id < $6")
            case (.name, false): filters += SQLText(#"AND (name_key, id) > ($4 COLLATE "C", $6)"#)
            case (.name, true): filters += SQLText(#"AND (name_key, id) < ($4 COLLATE "C", $6)"#)
            case (.cost, false): filters += SQLText("AND (cost_cents, id) > ($5, $6)")
            case (.cost, true): filters += SQLText("AND (cost_cents, id) < ($5, $6)")
            case (.type, false): filters += SQLText("AND (type, id) > ($5, $6)")
            case (.type, true): filters += SQLText("AND (type, id) < ($5, $6)")
            }
        }
        let order = query.sort.orderBy
        select =
            SQLText("SELECT") + OrderColumn.selectList + SQLText("FROM orders") + filters + order
            + SQLText("LIMIT $7 OFFSET $8")
        count = SQLText("SELECT count(*) FROM orders") + counted
    }

    /// The smallest valid string above every string that starts with `prefix` (in "C"
    /// collation, which compares UTF-8 bytes, and so scalars): the prefix with its last scalar
    /// raised by one. (SQLite's byte bound can be invalid UTF-8, which PostgreSQL's text refuses.)
    static func upperBound(_ prefix: String) -> String {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var value = last.value + 1
            if (0xD800...0xDFFF).contains(value) { value = 0xE000 }
            if let next = Unicode.Scalar(value) {
                scalars.append(next)
                return String(String.UnicodeScalarView(scalars))
            }
        }
        return "\u{10FFFF}\u{10FFFF}"  // every scalar was the last one: nothing is above, near enough
    }

    /// The nine parameters for `query`.
    static func values(_ query: OrderQuery) -> [PostgresConnection.Value] {
        let prefix = query.namePrefix.map { OrderQuery.nameKey($0) }
        let high = prefix.map(upperBound)
        var afterText: PostgresConnection.Value = .null
        var afterNumber: PostgresConnection.Value = .null
        switch query.after?.value {
        case .text(let text)?: afterText = .text(text)
        case .number(let number)?: afterNumber = .integer(Int64(number))
        default: break
        }
        return [
            prefix.map { .text($0) } ?? .null, high.map { .text($0) } ?? .null,
            query.type.map { .integer(Int64($0)) } ?? .null, afterText, afterNumber,
            query.after.map { .integer($0.id) } ?? .null, .integer(Int64(query.limit + 1)),
            .integer(Int64(query.after == nil ? query.offset : 0)),
            query.filtersStatus ? .text(PostgresArray.texts(query.statusList.map(\.wireName))) : .null,
        ]
    }
}
