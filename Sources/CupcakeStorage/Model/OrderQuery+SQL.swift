extension OrderQuery.Sort {
    /// The ORDER BY for this sort, the same on both engines: each sort walks its index (ids are
    /// placement order, so time is the primary key), ties broken by id in the sort's direction.
    var orderBy: SQLText {
        switch (key, descending) {
        case (.createdAt, false): SQLText("ORDER BY id ASC")
        case (.createdAt, true): SQLText("ORDER BY id DESC")
        case (.name, false): SQLText("ORDER BY name_key ASC, id ASC")
        case (.name, true): SQLText("ORDER BY name_key DESC, id DESC")
        case (.cost, false): SQLText("ORDER BY cost_cents ASC, id ASC")
        case (.cost, true): SQLText("ORDER BY cost_cents DESC, id DESC")
        case (.type, false): SQLText("ORDER BY type ASC, id ASC")
        case (.type, true): SQLText("ORDER BY type DESC, id DESC")
        }
    }
}
