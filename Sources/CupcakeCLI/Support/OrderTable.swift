import CupcakeCheckout
import CupcakeDomain
import Foundation

/// How `cupcake orders` shows orders; a missing field shows as "—", never as a failure.
enum OrderTable {
    static let missing = "—"

    /// The aligned table: ID, PLACED, NAME, CAKES, TOTAL, ★.
    static func render(_ orders: [ListedOrder], timeZone: TimeZone) -> [String] {
        let header = ["ID", "PLACED", "NAME", "CAKES", "TOTAL", "★"]
        let rows = orders.map { order in
            [
                order.id.map(cell) ?? missing, placed(order.createdAt, timeZone), order.name.map(cell) ?? missing,
                cakes(order),
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
    static func details(_ order: ListedOrder, timeZone: TimeZone) -> [String] {
        var lines = [
            "Order \(order.id ?? missing)\(order.isFavorite == true ? " ★" : "")",
            "  placed   \(placed(order.createdAt, timeZone))",
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

    /// "2026-12-02 11:00:00 +01:00": the local time in `timeZone` with its offset, from any ISO
    /// 8601 time the endpoint wrote.
    static func placed(_ text: String?, _ timeZone: TimeZone) -> String {
        guard let text, let milliseconds = Timestamp.milliseconds(iso8601: text) else {
            return text.map(cell) ?? missing
        }
        let offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        let iso = Timestamp.iso8601(milliseconds: milliseconds + Int64(offset) * 1000)
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        let zone = sign + String(format: "%02d:%02d", minutes / 60, minutes % 60)
        return String(iso.prefix(19)).replacingOccurrences(of: "T", with: " ") + " " + zone
    }

    /// The time zone to show times in: `TZ` when it names one, else the system's.
    static func timeZone(_ environment: Environment) -> TimeZone {
        if let name = environment["TZ"].map({ $0.hasPrefix(":") ? String($0.dropFirst()) : $0 }), !name.isEmpty,
            let zone = TimeZone(identifier: name)
                ?? (name == "UTC" || name == "UTC0" ? TimeZone(identifier: "UTC") : nil)
        {
            return zone
        }
        return TimeZone.current
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
