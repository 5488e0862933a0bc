import CupcakeDomain
import CupcakeJSON
import FoundationEssentials

/// The endpoint's answer to a placed order, as reqres writes it: the echoed order plus `id` (a
/// string or a number) and `createdAt` (with or without fractional seconds); our own server adds
/// `costCents`, `currency` and `isFavorite`, which are used when present.
public struct Confirmation: Sendable, Equatable, Encodable {
    /// The echoed order.
    public var order: Order
    /// The id the endpoint gave it.
    public var id: String
    /// When the endpoint says it was created, as it wrote it.
    public var createdAt: String
    /// The total in cents: the endpoint's own figure when it sends one, else the local price.
    public var costCents: Int
    /// The currency.
    public var currency: String
    /// The receipt token that lets the app key reach this order again (absent from a replay,
    /// and from servers without one).
    public var receiptToken: String?
    /// Whether the shop marked it as a favourite.
    public var isFavorite: Bool = false

    /// Decodes an answer and checks that it echoes `sent`.
    ///
    /// - Throws: ``CheckoutError`` (protocol) when it is not that JSON.
    public static func decode(_ data: Data, sent: Order) throws(CheckoutError) -> Confirmation {
        try decode(data, sent: sent, quick: true)
    }

    /// The same; `quick: false` reads even a flat answer in full (the tests
    /// compare the two ways).
    package static func decode(_ data: Data, sent: Order, quick: Bool) throws(CheckoutError) -> Confirmation {
        let echoed: Order
        let fields: Fields
        // The common answer, one flat object (our server's and reqres's), is read in one pass by
        // the order's own reader, without building a whole document's values; anything else in
        // full.
        if quick, let flat = data.withUnsafeBytes({ Order.decodeFlat(json: $0.bindMemory(to: UInt8.self)) }) {
            echoed = flat.order
            fields = Fields(flat.others)
        } else {
            (echoed, fields) = try readInFull(data)
        }
        guard echoed == sent else {
            throw CheckoutError(.protocolError, "The endpoint's answer echoes a different order than the one sent.")
        }
        guard let id = fields.id else {
            throw CheckoutError(.protocolError, "The endpoint's answer has no order id.")
        }
        guard let createdAt = fields.createdAt, Timestamp.milliseconds(iso8601: createdAt) != nil else {
            throw CheckoutError(.protocolError, "The endpoint's answer has no valid createdAt.")
        }
        // Printed and kept: only a plain token (no control characters, no spaces) is believed.
        let token = fields.receiptToken.flatMap {
            $0.utf8.count <= 200 && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } ? $0 : nil
        }
        return Confirmation(
            order: echoed, id: TerminalText.escaped(id), createdAt: TerminalText.escaped(createdAt),
            costCents: fields.costCents ?? sent.costCents, currency: TerminalText.escaped(fields.currency ?? "USD"),
            receiptToken: token, isFavorite: fields.isFavorite)
    }

    /// The answer's fields besides the order, however they were read.
    struct Fields {
        /// A non-empty string id, or a number's digits (a boolean is no id).
        var id: String?
        var createdAt: String?
        /// A number that is not a boolean.
        var costCents: Int?
        var currency: String?
        var receiptToken: String?
        /// Only the boolean `true` is.
        var isFavorite = false

        /// From the flat reader's scalars.
        init(_ others: [(key: String, value: JSONScalar)]) {
            for (key, value) in others {
                switch (key, value) {
                case ("id", .string(let text)) where !text.isEmpty: id = text
                case ("id", .integer(let number)): id = String(number)
                case ("createdAt", .string(let text)): createdAt = text
                case ("costCents", .integer(let number)): costCents = number
                case ("currency", .string(let text)): currency = text
                case ("receiptToken", .string(let text)): receiptToken = text
                case ("isFavorite", .bool(let flag)): isFavorite = flag
                default: break
                }
            }
        }

        /// From a whole document's object.
        init(_ body: JSONValue) {
            switch body["id"] {
            case .string(let text)? where !text.isEmpty: id = text
            case .integer(let number)?: id = String(number)
            case .number(let number)?: id = "\(number)"
            default: id = nil
            }
            createdAt = body["createdAt"]?.string
            costCents = body["costCents"]?.wholeNumber
            currency = body["currency"]?.string
            receiptToken = body["receiptToken"]?.string
            isFavorite = body["isFavorite"] == .bool(true)
        }
    }

    /// Reads any answer in full: the order (perhaps wrapped in reqres's "data") and the fields
    /// beside it.
    private static func readInFull(_ data: Data) throws(CheckoutError) -> (Order, Fields) {
        guard let object = try? JSONValue.parse(data), object.members != nil else {
            throw CheckoutError(.protocolError, "The endpoint's answer is not a JSON object: \(preview(data)).")
        }
        // reqres-style single resources may wrap the order in "data".
        let wrapped = object["data"].flatMap { $0.members != nil && $0["id"] != nil ? $0 : nil }
        let echoed: Order
        do {
            // The answer itself when it is the order (our server's case), without writing it again.
            echoed = try Order.decode(json: wrapped.map { Data($0.text().utf8) } ?? data)
        } catch {
            throw CheckoutError(.protocolError, "The endpoint's answer does not echo the order: \(error).")
        }
        return (echoed, Fields(wrapped ?? object))
    }

    /// The answer's start, for messages: at most 80 characters on one line.
    static func preview(_ data: Data) -> String {
        let start = String(decoding: data.prefix(120), as: UTF8.self)
        let text = String(String.UnicodeScalarView(start.unicodeScalars.map { $0 == "\n" ? " " : $0 }))
            .trimmingWhitespace()
        if text.isEmpty { return "an empty body" }
        return "'" + (text.count > 80 ? String(text.prefix(80)) + "…" : text) + "'"
    }

    enum CodingKeys: String, CodingKey {
        case id, createdAt, costCents, currency, isFavorite, receiptToken
    }

    /// Encodes the order's wire keys plus id, createdAt, costCents and currency.
    public func encode(to encoder: any Encoder) throws {
        try order.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(costCents, forKey: .costCents)
        try container.encode(currency, forKey: .currency)
        try container.encode(isFavorite, forKey: .isFavorite)
        try container.encodeIfPresent(receiptToken, forKey: .receiptToken)
    }
}
