/// SQL assembled only from compile-time constant pieces (and parameter placeholders numbered by
/// code). A list query is composed from a fixed set of fragments (filters, an ORDER BY per sort
/// key), and the type makes it impossible for a value, or any other runtime text, to end up in
/// the SQL: every value is a bound parameter.
infix operator ++ : AdditionPrecedence

struct SQLText: Hashable, Sendable {
    private(set) var text: String

    init(_ constant: StaticString) {
        text = constant.description
    }

    /// Constant names joined by commas: a column list.
    init(list names: [StaticString]) {
        text = names.map(\.description).joined(separator: ", ")
    }

    /// `(?, ?, …)`: one row of `count` placeholders.
    static func placeholders(_ count: Int) -> SQLText {
        var row = SQLText("(")
        row.text += Array(repeating: "?", count: count).joined(separator: ", ") + ")"
        return row
    }

    /// PostgreSQL's placeholder for parameter `number`, cast to a constant type: `$3::integer[]`.
    static func parameter(_ number: Int, as type: StaticString) -> SQLText {
        var placeholder = SQLText("")
        placeholder.text = "$\(number)::\(type)"
        return placeholder
    }

    /// Joined without a space (for a comma or a parenthesis after a placeholder).
    static func ++ (lhs: SQLText, rhs: SQLText) -> SQLText {
        var joined = lhs
        joined.text += rhs.text
        return joined
    }

    static func + (lhs: SQLText, rhs: SQLText) -> SQLText {
        var joined = lhs
        joined.text += " " + rhs.text
        return joined
    }

    static func += (lhs: inout SQLText, rhs: SQLText) {
        lhs = lhs + rhs
    }

    /// For a one-row `INSERT … VALUES (?, …)`: the same statement inserting `rows` rows, its last
    /// parenthesized group (the row of placeholders) repeated. Still only constant text.
    func repeatingValues(rows: Int) -> SQLText {
        guard rows > 1, let open = text.lastIndex(of: "("),
            let close = text[open...].firstIndex(of: ")")
        else { return self }
        let group = text[open...close]
        var repeated = self
        repeated.text.insert(
            contentsOf: String(repeating: ", " + group, count: rows - 1), at: text.index(after: close))
        return repeated
    }
}
