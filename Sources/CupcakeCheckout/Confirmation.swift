import CupcakeDomain
import Foundation

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

    /// Decodes an answer and checks that it echoes `sent`.
    ///
    /// - Throws: ``CheckoutError`` (protocol) when it is not that JSON.
    public static func decode(_ data: Data, sent: Order) throws(CheckoutError) -> Confirmation {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw CheckoutError(.protocolError, "The endpoint's answer is not a JSON object: \(preview(data)).")
        }
        // reqres-style single resources may wrap the order in "data".
        let body = (object["data"] as? [String: Any]).flatMap { $0["id"] != nil ? $0 : nil } ?? object
        let echoed: Order
        do {
            echoed = try Order.decode(json: JSONSerialization.data(withJSONObject: body))
        } catch {
            throw CheckoutError(.protocolError, "The endpoint's answer does not echo the order: \(error).")
        }
        guard echoed == sent else {
            throw CheckoutError(.protocolError, "The endpoint's answer echoes a different order than the one sent.")
        }
        let id: String
        switch body["id"] {
        case let text as String where !text.isEmpty: id = text
        case let number as NSNumber where String(cString: number.objCType) != "c": id = number.stringValue
        default: throw CheckoutError(.protocolError, "The endpoint's answer has no order id.")
        }
        guard let createdAt = body["createdAt"] as? String, Timestamp.milliseconds(iso8601: createdAt) != nil else {
            throw CheckoutError(.protocolError, "The endpoint's answer has no valid createdAt.")
        }
        var cost = sent.costCents
        if let number = body["costCents"] as? NSNumber, String(cString: number.objCType) != "c" {
            cost = number.intValue
        }
        return Confirmation(
            order: echoed, id: id, createdAt: createdAt, costCents: cost, currency: body["currency"] as? String ?? "USD"
        )
    }

    /// The answer's start, for messages: at most 80 characters on one line.
    static func preview(_ data: Data) -> String {
        let text = String(decoding: data.prefix(120), as: UTF8.self)
            .replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return "an empty body" }
        return "'" + (text.count > 80 ? String(text.prefix(80)) + "…" : text) + "'"
    }

    enum CodingKeys: String, CodingKey {
        case id, createdAt, costCents, currency
    }

    /// Encodes the order's wire keys plus id, createdAt, costCents and currency.
    public func encode(to encoder: any Encoder) throws {
        try order.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(costCents, forKey: .costCents)
        try container.encode(currency, forKey: .currency)
    }
}
