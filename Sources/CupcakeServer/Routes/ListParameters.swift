import CupcakeDomain
import CupcakeStorage

/// The query parameters of `GET /api/cupcakes`, checked: name_prefix, type, favorite, status,
/// sort, page and per_page. A bad value is a 400 naming the parameter.
struct ListParameters: Equatable {
    /// reqres's default page size.
    static let defaultPerPage = 6
    /// The largest page size (a larger one is a 400).
    static let maximumPerPage = 100

    /// The page number, or nil when the request goes on from a cursor.
    var page: Int?
    var perPage: Int
    var query: OrderQuery

    /// The parameters a list request may carry. Any other is a 400 naming it: a misspelt filter
    /// (`?favourite=true`) must not quietly list everything.
    static let known: Set<String> = [
        "page", "per_page", "name_prefix", "type", "favorite", "status", "sort", "cursor",
    ]
    /// How deep `page` may reach, in orders; `cursor` goes on from there at the same cost.
    static let maximumDepth = 10_000

    init(_ parameters: [String: String]) throws(Problem) {
        if let unknown = parameters.keys.sorted().first(where: { !Self.known.contains($0) }) {
            throw Problem.badRequest(
                "Unknown parameter '\(unknown)'; the list takes \(Self.known.sorted().joined(separator: ", ")).")
        }
        if let text = parameters["cursor"] {
            self = try ListParameters(cursor: text, parameters)
            return
        }
        let page = try Self.positive(parameters["page"], name: "page") ?? 1
        self.page = page
        perPage = try Self.positive(parameters["per_page"], name: "per_page") ?? Self.defaultPerPage
        guard perPage <= Self.maximumPerPage else {
            throw Problem.badRequest("per_page may be at most \(Self.maximumPerPage), not \(perPage).")
        }
        var query = OrderQuery()
        if let prefix = parameters["name_prefix"], !prefix.isEmpty { query.namePrefix = prefix }
        if let text = parameters["type"] {
            guard let type = CakeType(argument: text) else {
                throw Problem.badRequest("type must be one of \(CakeType.choices), not '\(text)'.")
            }
            query.type = type.rawValue
        }
        if let text = parameters["favorite"] {
            switch text.lowercased() {
            case "true": query.favorite = true
            case "false": query.favorite = false
            default: throw Problem.badRequest("favorite must be true or false, not '\(text)'.")
            }
        }
        if let text = parameters["status"] {
            query.statuses = try Self.statuses(text)
        }
        if let text = parameters["sort"] {
            guard let sort = OrderQuery.Sort(parameter: text) else {
                let keys = OrderQuery.SortKey.allCases.map(\.rawValue).joined(separator: ", ")
                throw Problem.badRequest(
                    "sort must be one of \(keys), with '-' in front for descending; not '\(text)'.")
            }
            query.sort = sort
        }
        query.limit = perPage
        try Self.checkPrefix(query.namePrefix)
        let (offset, overflow) = (page - 1).multipliedReportingOverflow(by: perPage)
        guard !overflow, offset + perPage <= Self.maximumDepth else {
            throw Problem.badRequest(
                "page may reach at most \(Self.maximumDepth) orders deep (page × per_page); follow next_cursor "
                    + "from an earlier page to go further.")
        }
        query.offset = offset
        self.query = query
    }

    /// Going on from a cursor: its filters and sort, and this request's page size if it gives
    /// one. Filters given beside it must be the cursor's own; `page` may not be given at all.
    private init(cursor text: String, _ parameters: [String: String]) throws(Problem) {
        guard let cursor = ListCursor(text: text) else {
            throw Problem.badRequest("cursor is not one this server made; start again without it.")
        }
        guard parameters["page"] == nil else {
            throw Problem.badRequest("Give page or cursor, not both.")
        }
        let plain = try ListParameters(parameters.filter { $0.key != "cursor" })
        var given = plain.query
        given.sort = parameters["sort"] == nil ? cursor.query.sort : given.sort
        given.namePrefix = parameters["name_prefix"] == nil ? cursor.query.namePrefix : given.namePrefix
        given.type = parameters["type"] == nil ? cursor.query.type : given.type
        given.favorite = parameters["favorite"] == nil ? cursor.query.favorite : given.favorite
        given.statuses = parameters["status"] == nil ? cursor.query.statuses : given.statuses
        guard given.sort == cursor.query.sort, given.namePrefix == cursor.query.namePrefix,
            given.type == cursor.query.type, given.favorite == cursor.query.favorite,
            given.statuses == cursor.query.statuses
        else {
            throw Problem.badRequest("The cursor was made for another filter or sort; give it alone.")
        }
        try Self.checkPrefix(cursor.query.namePrefix)
        page = nil
        perPage = parameters["per_page"] == nil ? cursor.perPage : plain.perPage
        query = cursor.query
        query.limit = perPage
    }

    /// `status=baking,out_for_delivery`: one or several statuses, comma-separated.
    static func statuses(_ text: String) throws(Problem) -> Set<OrderStatus> {
        var statuses: Set<OrderStatus> = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let status = OrderStatus(wireName: name) else {
                throw Problem.badRequest(
                    "status must be one or more of \(OrderStatus.wireNames), comma-separated; not '\(text)'.")
            }
            statuses.insert(status)
        }
        return statuses
    }

    private static func checkPrefix(_ prefix: String?) throws(Problem) {
        guard let prefix else { return }
        guard prefix.unicodeScalars.count <= Order.maximumFieldLength, prefix.utf8.count <= Order.maximumFieldBytes
        else {
            throw Problem.badRequest(
                "name_prefix must be at most \(Order.maximumFieldLength) characters and \(Order.maximumFieldBytes) bytes."
            )
        }
    }

    private static func positive(_ text: String?, name: String) throws(Problem) -> Int? {
        guard let text else { return nil }
        guard let number = Int(text), number >= 1 else {
            throw Problem.badRequest("\(name) must be a whole number from 1, not '\(text)'.")
        }
        return number
    }
}
