import CupcakeDomain

/// The orders table's columns, declared once: both engines insert rows, select them and read
/// them back by name from this list, so a new field of an order is one case here (its name,
/// kind and value), one line where a stored order is read (``StoredOrder/init(row:)``), and a
/// migration per engine.
enum OrderColumn: Int, CaseIterable, Sendable {
    case id, type, quantity, specialRequestEnabled, extraFrosting, addSprinkles, name, streetAddress, city, zip
    case costCents, createdAtMilliseconds, nameKey, isFavorite, receiptHash
    case status, statusChangedAtMilliseconds, version

    /// How a column's values are stored and bound.
    enum Kind: Sendable {
        case integer, boolean, text, bytes
    }

    /// One value of a column, to insert.
    enum Value: Sendable {
        case integer(Int64)
        case boolean(Bool)
        case text(String)
        /// Bytes, or NULL.
        case bytes([UInt8]?)
    }

    /// The column's name in SQL.
    var name: StaticString {
        switch self {
        case .id: "id"
        case .type: "type"
        case .quantity: "quantity"
        case .specialRequestEnabled: "special_request_enabled"
        case .extraFrosting: "extra_frosting"
        case .addSprinkles: "add_sprinkles"
        case .name: "name"
        case .streetAddress: "street_address"
        case .city: "city"
        case .zip: "zip"
        case .costCents: "cost_cents"
        case .createdAtMilliseconds: "created_at_ms"
        case .nameKey: "name_key"
        case .isFavorite: "is_favorite"
        case .receiptHash: "receipt_hash"
        case .status: "status"
        case .statusChangedAtMilliseconds: "status_changed_at_ms"
        case .version: "version"
        }
    }

    var kind: Kind {
        switch self {
        case .id, .type, .quantity, .costCents, .createdAtMilliseconds, .statusChangedAtMilliseconds, .version:
            .integer
        case .specialRequestEnabled, .extraFrosting, .addSprinkles, .isFavorite: .boolean
        case .name, .streetAddress, .city, .zip, .nameKey, .status: .text
        case .receiptHash: .bytes
        }
    }

    /// PostgreSQL's array type for the column, for inserting a batch with `unnest`.
    var postgresArrayType: StaticString {
        switch self {
        case .id, .createdAtMilliseconds, .statusChangedAtMilliseconds, .version: "bigint[]"
        case .type, .quantity, .costCents: "integer[]"
        case .specialRequestEnabled, .extraFrosting, .addSprinkles, .isFavorite: "boolean[]"
        case .name, .streetAddress, .city, .zip, .nameKey, .status: "text[]"
        case .receiptHash: "bytea[]"
        }
    }

    /// The value to insert for `stored`.
    func value(of stored: StoredOrder) -> Value {
        let order = stored.order
        return switch self {
        case .id: .integer(stored.id)
        case .type: .integer(Int64(order.type))
        case .quantity: .integer(Int64(order.quantity))
        case .specialRequestEnabled: .boolean(order.specialRequestEnabled)
        case .extraFrosting: .boolean(order.extraFrosting)
        case .addSprinkles: .boolean(order.addSprinkles)
        case .name: .text(order.name)
        case .streetAddress: .text(order.streetAddress)
        case .city: .text(order.city)
        case .zip: .text(order.zip)
        case .costCents: .integer(Int64(stored.costCents))
        case .createdAtMilliseconds: .integer(stored.createdAtMilliseconds)
        case .nameKey: .text(OrderQuery.nameKey(order.name))
        case .isFavorite: .boolean(stored.isFavorite)
        case .receiptHash: .bytes(stored.receiptHash)
        case .status: .text(stored.status.wireName)
        case .statusChangedAtMilliseconds: .integer(stored.statusChangedAtMilliseconds)
        case .version: .integer(stored.version)
        }
    }

    /// The columns an INSERT of a new order lists, in order: every one but those a new order
    /// takes the default of (placed, version 1, and a status time of 0, read as its creation
    /// time), which makes the row smaller and the insert cheaper.
    static let inserted = allCases.filter { ![.status, .statusChangedAtMilliseconds, .version].contains($0) }
    /// The columns an order is read from, in the order a SELECT lists them: every one but the
    /// name key, which only serves the name index.
    static let selected = allCases.filter { $0 != .nameKey }
    /// Where each column stands in ``selected`` (by ``rawValue``; -1 for one not selected).
    private static let selectedPositions: [Int] = allCases.map { column in selected.firstIndex(of: column) ?? -1 }

    /// Where the column stands in a row selected with ``selectList``.
    var position: Int32 { Int32(Self.selectedPositions[rawValue]) }

    /// `id, type, …`: ``selected`` as a SELECT list.
    static let selectList = SQLText(list: selected.map(\.name))
    /// ``inserted`` as an INSERT's column list.
    static let insertList = SQLText(list: inserted.map(\.name))
}

/// A row selected with ``OrderColumn/selectList``, read by column, from either engine.
protocol OrderRow {
    func integer(_ column: OrderColumn) -> Int64
    func boolean(_ column: OrderColumn) -> Bool
    func text(_ column: OrderColumn) -> String
    func bytes(_ column: OrderColumn) -> [UInt8]
}

extension StoredOrder {
    /// The order a row holds (its receipt hash too, when the row has one).
    init(row: some OrderRow) {
        let hash = row.bytes(.receiptHash)
        self.init(
            id: row.integer(.id),
            order: Order(
                type: Int(row.integer(.type)), quantity: Int(row.integer(.quantity)),
                specialRequestEnabled: row.boolean(.specialRequestEnabled),
                extraFrosting: row.boolean(.extraFrosting), addSprinkles: row.boolean(.addSprinkles),
                name: row.text(.name), streetAddress: row.text(.streetAddress), city: row.text(.city),
                zip: row.text(.zip)),
            costCents: Int(row.integer(.costCents)), createdAtMilliseconds: row.integer(.createdAtMilliseconds),
            isFavorite: row.boolean(.isFavorite), receiptHash: hash.isEmpty ? nil : hash,
            // A status this build does not know (written by a newer one) reads as placed.
            status: OrderStatus(wireName: row.text(.status)) ?? .placed,
            // 0: an order from before statuses were kept, placed when it was created.
            statusChangedAtMilliseconds: row.integer(.statusChangedAtMilliseconds) == 0
                ? row.integer(.createdAtMilliseconds) : row.integer(.statusChangedAtMilliseconds),
            version: row.integer(.version))
    }
}
