import CupcakeCheckout
import CupcakeDomain
import Foundation

/// How `cupcake orders` shows orders; a missing field shows as "—", never as a failure.
enum OrderTable {
    static let missing = "—"

    /// The aligned table: ID, PLACED, NAME, CAKES, TOTAL, ★.
    static func render(_ orders: [ListedOrder]) -> [String] {
        let header = ["ID", "PLACED", "NAME", "CAKES", "TOTAL", "★"]
        let rows = orders.map { order in
            [
                order.id.map(cell) ?? missing, placed(order.createdAt), order.name.map(cell) ?? missing, cakes(order),
                order.costCents.map { Money(cents: $0).formatted } ?? missing, order.isFavorite == true ? "★" : "",
            ]
        }
        let widths = (0..<header.count).map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        return ([header] + rows).map { row in
            row.enumerated().map { column, text in
                let padding = String(repeating: " ", count: widths[column] - text.count)
                // Money lines up on the right.
                return column == 4 ? padding + text : text + padding
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }

    /// One order, a field per line.
    static func details(_ order: ListedOrder) -> [String] {
        var lines = [
            "Order \(order.id ?? missing)\(order.isFavorite == true ? " ★" : "")",
            "  placed   \(placed(order.createdAt))",
            "  cakes    \(cakes(order))",
            "  total    \(order.costCents.map { Money(cents: $0).formatted } ?? missing)",
        ]
        if let full = order.order {
            var extras: [String] = []
            if full.extraFrosting { extras.append("extra frosting") }
            if full.addSprinkles { extras.append("sprinkles") }
            lines.append("  extras   \(extras.isEmpty ? "none" : extras.joined(separator: ", "))")
            lines.append(
                "  deliver  \(cell(full.name)), \(cell(full.streetAddress)), \(cell(full.city)) \(cell(full.zip))")
        } else {
            lines.append("  name     \(order.name.map(cell) ?? missing)")
        }
        return lines
    }

    /// "5 × chocolate".
    static func cakes(_ order: ListedOrder) -> String {
        let kind = order.type.flatMap { CakeType(rawValue: $0)?.name.lowercased() } ?? order.type.map { "type \($0)" }
        switch (order.quantity, kind) {
        case let (quantity?, kind?): return "\(quantity) × \(kind)"
        case let (quantity?, nil): return "\(quantity) × \(missing)"
        case let (nil, kind?): return "\(missing) × \(kind)"
        case (nil, nil): return missing
        }
    }

    /// "2026-12-02 10:00:00" in UTC, from any ISO 8601 time the endpoint wrote.
    static func placed(_ text: String?) -> String {
        guard let text, let milliseconds = Timestamp.milliseconds(iso8601: text) else {
            return text.map(cell) ?? missing
        }
        let iso = Timestamp.iso8601(milliseconds: milliseconds)
        return String(iso.prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    /// Text from the server made safe for one table cell: control and bidi characters escaped
    /// (``TerminalText``), at most 40 characters.
    static func cell(_ text: String) -> String {
        let clean = TerminalText.escaped(text)
        return clean.count > 40 ? String(clean.prefix(39)) + "…" : clean
    }

    /// Pretty JSON for `--json`, or the text as it came when it is not JSON.
    static func pretty(_ data: Data) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: data),
            let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        else { return TerminalText.escaped(String(decoding: data, as: UTF8.self)) }
        return TerminalText.escapedJSON(String(decoding: pretty, as: UTF8.self))
    }

    /// The one positional id a command takes.
    static func singleID(_ arguments: ParsedArguments) throws(CLIError) -> String {
        guard let id = arguments.positionals.first else {
            throw .usage("Missing expected argument '<id>'.", arguments.command)
        }
        guard arguments.positionals.count == 1 else {
            throw .usage("Unexpected argument '\(arguments.positionals[1])'.", arguments.command)
        }
        return id
    }
}
