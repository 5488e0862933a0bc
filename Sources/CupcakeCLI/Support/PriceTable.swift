import CupcakeDomain

/// A price as aligned lines: one per line item, a rule, then the total.
enum PriceTable {
    static func lines(_ price: Price) -> [String] {
        let rows =
            price.lineItems.map { ($0.description, Money(cents: $0.cents).formatted) } + [
                ("Total", price.total.formatted)
            ]
        let left = rows.map(\.0.count).max() ?? 0
        let right = rows.map(\.1.count).max() ?? 0
        var lines: [String] = []
        for (index, row) in rows.enumerated() {
            if index == rows.count - 1 {
                lines.append(String(repeating: "-", count: left + right + 2))
            }
            lines.append(row.0 + String(repeating: " ", count: left - row.0.count + 2 + right - row.1.count) + row.1)
        }
        return lines
    }
}
