import CupcakeDomain
import CupcakeJSON
import FoundationEssentials

/// An order as the endpoint lists it, read leniently: any field may be missing or of the wrong
/// type (another server, an older one), and is then shown with a fallback instead of failing.
public struct ListedOrder: Sendable, Equatable {
    /// The id, if the endpoint gave one.
    public var id: String?
    /// The creation time as written, if any.
    public var createdAt: String?
    /// The customer's name.
    public var name: String?
    /// The cake type's index.
    public var type: Int?
    /// How many cakes.
    public var quantity: Int?
    /// The price in cents.
    public var costCents: Int?
    /// Whether it is a favourite.
    public var isFavorite: Bool?
    /// Its status's wire name (`out_for_delivery`), if the endpoint gave one.
    public var status: String?
    /// Its version (what its ETag names), if given.
    public var version: Int?
    /// Its history, oldest first, when the endpoint sent one (one order's answer does).
    public var history: [HistoryEntry] = []
    /// The whole order, when every wire key decoded.
    public var order: Order?

    /// One change in an order's history.
    public struct HistoryEntry: Sendable, Equatable {
        /// The status reached (wire name).
        public var status: String?
        /// When, as written.
        public var at: String?
        /// Who: `customer` or `staff`.
        public var by: String?
        /// Why, if a reason was given.
        public var reason: String?
    }
    /// The element as received, for `--json`.
    public var raw: Data

    /// Reads one element of `data`.
    public init(json object: JSONValue) {
        switch object["id"] {
        case .string(let text)?: id = text
        case .integer(let number)?: id = String(number)
        case .number(let number)?: id = "\(number)"
        default: id = nil
        }
        createdAt = object["createdAt"]?.string
        name = object["name"]?.string
        type = object["type"]?.wholeNumber
        quantity = object["quantity"]?.wholeNumber
        costCents = object["costCents"]?.wholeNumber
        isFavorite = object["isFavorite"]?.bool
        status = object["status"]?.string
        version = object["version"]?.integer
        history = (object["history"]?.elements ?? []).map { entry in
            HistoryEntry(
                status: entry["status"]?.string, at: entry["at"]?.string, by: entry["by"]?.string,
                reason: entry["reason"]?.string)
        }
        raw = Data((object.members != nil ? object : .object([])).text(sortedKeys: true).utf8)
        order = try? Order.decode(json: raw)
    }

    /// The placed order, when everything needed for it is here.
    public var placed: PlacedOrder? {
        guard let order, let id, let createdAt, let milliseconds = Timestamp.milliseconds(iso8601: createdAt) else {
            return nil
        }
        return PlacedOrder(
            order: order, id: id, createdAtMilliseconds: milliseconds, costCents: costCents ?? order.costCents,
            isFavorite: isFavorite ?? false)
    }
}

/// One page of the history, in reqres's list shape.
public struct OrderListPage: Sendable {
    /// The page number.
    public var page: Int?
    /// The page size.
    public var perPage: Int?
    /// Orders matching in all.
    public var total: Int?
    /// Pages in all.
    public var totalPages: Int?
    /// The orders on this page.
    public var orders: [ListedOrder]
    /// The answer as received, for `--json`.
    public var raw: Data

    /// Reads a list answer.
    ///
    /// - Throws: ``CheckoutError`` (protocol) when it is not an object with a `data` array.
    public init(json data: Data) throws(CheckoutError) {
        guard let object = try? JSONValue.parse(data), object.members != nil, let items = object["data"]?.elements
        else {
            throw CheckoutError(
                .protocolError, "The endpoint's list is not reqres's shape: \(Confirmation.preview(data)).")
        }
        page = object["page"]?.integer
        perPage = object["per_page"]?.integer
        total = object["total"]?.integer
        totalPages = object["total_pages"]?.integer
        orders = items.map { ListedOrder(json: $0) }
        raw = data
    }
}
