import CupcakeStorage
import Foundation

/// The opaque `next_cursor` of a list answer: the filters, the sort, the page size and the
/// position after the page's last order, as compact JSON in base64url. `?cursor=` goes on from
/// there with an index seek (``OrderQuery/Position``), so a page a million orders deep costs what
/// the first does. A client treats it as opaque; a tampered one can only move where a list the
/// same key may read begins, and its values are bound as SQL parameters like any other.
struct ListCursor: Equatable {
    var query: OrderQuery
    var perPage: Int

    /// The cursor for the page after `orders`' last order.
    init(query: OrderQuery, perPage: Int, after last: StoredOrder) {
        var query = query
        query.after = OrderQuery.Position(after: last, in: query.sort)
        query.offset = 0
        self.query = query
        self.perPage = perPage
    }

    /// The cursor as `next_cursor` gives it.
    var text: String {
        var object: [String: Any] = ["v": 1, "s": query.sort.description, "p": perPage]
        if let prefix = query.namePrefix { object["n"] = prefix }
        if let type = query.type { object["t"] = type }
        if let favorite = query.favorite { object["f"] = favorite }
        if let after = query.after {
            object["i"] = after.id
            switch after.value {
            case .text(let text): object["k"] = text
            case .number(let number): object["k"] = number
            case .none: break
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Reads a cursor this server made; nil for anything else.
    init?(text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.utf8.count <= 1024, let data = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            object["v"] as? Int == 1, let sortText = object["s"] as? String,
            let sort = OrderQuery.Sort(parameter: sortText), let perPage = object["p"] as? Int,
            (1...ListParameters.maximumPerPage).contains(perPage), let id = (object["i"] as? NSNumber)?.int64Value
        else { return nil }
        var query = OrderQuery(sort: sort, limit: perPage)
        query.namePrefix = object["n"] as? String
        query.type = object["t"] as? Int
        query.favorite = object["f"] as? Bool
        let value: OrderQuery.Position.Value
        switch (sort.key, object["k"]) {
        case (.createdAt, nil): value = .none
        case (.name, let text as String): value = .text(text)
        case (.cost, let number as Int), (.type, let number as Int): value = .number(number)
        default: return nil
        }
        query.after = OrderQuery.Position(value: value, id: id)
        self.query = query
        self.perPage = perPage
    }
}
