import CupcakeCheckout
import CupcakeDomain
import CupcakeJSON
import FoundationEssentials
import Glibc

/// How `cupcake orders` shows orders; a missing field shows as "—", never as a failure.
enum OrderTable {
    static let missing = "—"

    /// The aligned table: ID, PLACED, NAME, CAKES, TOTAL, STATUS, ★.
    static func render(_ orders: [ListedOrder]) -> [String] {
        let header = ["ID", "PLACED", "NAME", "CAKES", "TOTAL", "STATUS", "★"]
        let rows = orders.map { order in
            [
                order.id.map(cell) ?? missing, placed(order.createdAt), order.name.map(cell) ?? missing,
                cakes(order),
                order.costCents.map { Money(cents: $0).formatted } ?? missing, status(order.status),
                order.isFavorite == true ? "★" : "",
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
            }.joined(separator: "  ").droppingTrailingSpaces()
        }
    }

    /// One order, a field per line.
    static func details(_ order: ListedOrder) -> [String] {
        var lines = [
            "Order \(order.id.map(TerminalText.escaped) ?? missing)\(order.isFavorite == true ? " ★" : "")",
            "  placed   \(placed(order.createdAt))",
            "  status   \(status(order.status))",
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
        // The timeline: each status, when, and who (with the reason given).
        for (index, entry) in order.history.enumerated() {
            let who = entry.by.map { " by \(cell($0))" } ?? ""
            let why = entry.reason.map { ": \(cell($0))" } ?? ""
            lines.append(
                "  \(index == 0 ? "history" : "       ")  \(placed(entry.at))  \(status(entry.status))\(who)\(why)")
        }
        return lines
    }

    /// "out for delivery", from a status's wire name; another server's word escaped as it is.
    static func status(_ name: String?) -> String {
        guard let name else { return missing }
        return OrderStatus(wireName: name)?.title.lowercased() ?? cell(name)
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

    /// "2026-12-02 11:00:00 +01:00": the local time with its offset, from any ISO 8601 time
    /// the endpoint wrote. Local as the C library has it: `TZ` (a zone name such as
    /// `Asia/Kolkata`, or a POSIX rule), else the system's zone.
    static func placed(_ text: String?) -> String {
        guard let text, let milliseconds = Timestamp.milliseconds(iso8601: text) else {
            return text.map(cell) ?? missing
        }
        let offset = localOffset(atMilliseconds: milliseconds)
        let iso = Timestamp.iso8601(milliseconds: milliseconds + Int64(offset) * 1000)
        let minutes = abs(offset) / 60
        let zone = (offset < 0 ? "-" : "+") + twoDigits(minutes / 60) + ":" + twoDigits(minutes % 60)
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(8)) + " " + zone
    }

    /// The local zone's offset from UTC, in seconds, at an instant (`localtime_r`).
    static func localOffset(atMilliseconds milliseconds: Int64) -> Int {
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        var fields = tm()
        _ = timeZoneRead
        guard localtime_r(&seconds, &fields) != nil else { return 0 }
        return Int(fields.tm_gmtoff)
    }

    /// `TZ`, read once (`localtime_r` need not read it itself).
    private static let timeZoneRead: Void = tzset()

    private static func twoDigits(_ number: Int) -> String {
        number < 10 ? "0\(number)" : String(number)
    }

    /// Text from the server made safe for one table cell: control and bidi characters escaped
    /// (``TerminalText``), at most 40 characters.
    static func cell(_ text: String) -> String {
        let clean = TerminalText.escaped(text)
        return clean.count > 40 ? String(clean.prefix(39)) + "…" : clean
    }

    /// Pretty JSON for `--json` (keys sorted, two spaces a level), or the text as it came when
    /// it is not JSON.
    static func pretty(_ data: Data) -> String {
        guard let value = try? JSONValue.parse(data) else {
            return TerminalText.escaped(String(decoding: data, as: UTF8.self))
        }
        return TerminalText.escapedJSON(value.text(pretty: true, sortedKeys: true))
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

extension String {
    /// The text without the spaces at its end.
    fileprivate func droppingTrailingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
