/// A PostgreSQL statement and its parameters, the parameters numbered as they are appended
/// (`$1`, `$2`, …) rather than by hand against a separate list, as postgres-nio's
/// `PostgresQuery` interpolation does.
struct PostgresQuery {
    private(set) var sql: SQLText
    private(set) var values: [PostgresConnection.Value] = []

    /// Starts with constant SQL.
    init(_ sql: SQLText) {
        self.sql = sql
    }

    /// Appends constant SQL, after a space.
    mutating func append(_ text: SQLText) {
        sql += text
    }

    /// Appends the next parameter's placeholder, cast to `type` (`$N::type`), after a space.
    mutating func bind(_ value: PostgresConnection.Value, as type: StaticString) {
        values.append(value)
        sql += SQLText.parameter(values.count, as: type)
    }

    /// Appends a list of parameters separated by commas, one per element.
    mutating func bind<Element>(
        each elements: [Element], separatedBy separator: SQLText = SQLText(","),
        _ bind: (inout PostgresQuery, Element) -> Void
    ) {
        for (index, element) in elements.enumerated() {
            if index > 0 { sql = sql ++ separator }
            bind(&self, element)
        }
    }
}
