import CupcakeDomain
import CupcakeJSON
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
        var members: [JSONValue.Member] = [
            .init(key: "v", value: .integer(1)), .init(key: "s", value: .string(query.sort.description)),
            .init(key: "p", value: .integer(Int64(perPage))),
        ]
        if let prefix = query.namePrefix { members.append(.init(key: "n", value: .string(prefix))) }
        if let type = query.type { members.append(.init(key: "t", value: .integer(Int64(type)))) }
        if let favorite = query.favorite { members.append(.init(key: "f", value: .bool(favorite))) }
        if query.statuses != OrderQuery.defaultStatuses {
            let names = OrderStatus.allCases.filter(query.statuses.contains).map(\.wireName)
            members.append(.init(key: "st", value: .string(names.joined(separator: ","))))
        }
        if let after = query.after {
            members.append(.init(key: "i", value: .integer(after.id)))
            switch after.value {
            case .text(let text): members.append(.init(key: "k", value: .string(text)))
            case .number(let number): members.append(.init(key: "k", value: .integer(Int64(number))))
            case .none: break
            }
        }
        let data = Data(JSONValue.object(members).text(sortedKeys: true).utf8)
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Reads a cursor this server made; nil for anything else.
    init?(text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.utf8.count <= 1024, let data = Data(base64Encoded: base64),
            let object = try? JSONValue.parse(data), object.members != nil,
            object["v"]?.integer == 1, let sortText = object["s"]?.string,
            let sort = OrderQuery.Sort(parameter: sortText), let perPage = object["p"]?.integer,
            (1...ListParameters.maximumPerPage).contains(perPage), case .integer(let id)? = object["i"]
        else { return nil }
        var query = OrderQuery(sort: sort, limit: perPage)
        query.namePrefix = object["n"]?.string
        query.type = object["t"]?.integer
        if case .bool(let favorite)? = object["f"] { query.favorite = favorite }
        if let names = object["st"]?.string {
            guard let statuses = try? ListParameters.statuses(names) else { return nil }
            query.statuses = statuses
        }
        let value: OrderQuery.Position.Value
        switch (sort.key, object["k"]) {
        case (.createdAt, nil): value = .none
        case (.name, .string(let text)?): value = .text(text)
        case (.cost, let number?), (.type, let number?):
            guard let number = number.integer else { return nil }
            value = .number(number)
        default: return nil
        }
        query.after = OrderQuery.Position(value: value, id: id)
        self.query = query
        self.perPage = perPage
    }
}
