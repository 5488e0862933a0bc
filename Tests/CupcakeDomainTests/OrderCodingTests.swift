import CupcakeDomain
import Foundation
import Testing

@Suite struct OrderCodingTests {
    @Test func encodesExactlyTheAppWireKeys() throws {
        let data = try JSONEncoder().encode(Order(type: 2, quantity: 5))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(
            Set(object.keys)
                == [
                    "type", "quantity", "specialRequestEnabled", "extraFrosting", "addSprinkles", "name",
                    "streetAddress", "city", "zip",
                ]
        )
    }

    @Test func roundTripsThroughJSON() throws {
        let order = Order(
            type: 3, quantity: 12, specialRequestEnabled: true, extraFrosting: true, addSprinkles: false,
            name: "Zoë \"Z\" O'Brien", streetAddress: "1 Main St", city: "Nashville", zip: "37201"
        )
        let data = try JSONEncoder().encode(order)
        #expect(try Order.decode(json: data) == order)
    }

    @Test func decodingWithSpecialRequestsOffClearsTheExtras() throws {
        let order = try Order.decode(
            json: Data(
                #"{"type":0,"quantity":4,"specialRequestEnabled":false,"extraFrosting":true,"addSprinkles":true}"#.utf8)
        )
        #expect(!order.specialRequestEnabled && !order.extraFrosting && !order.addSprinkles)
        #expect(order.costCents == 800)
    }

    @Test(arguments: [
        (#"{"type":0,"quantity":4,"extraFrosting":true}"#, true, true, false),
        (#"{"type":0,"quantity":4,"addSprinkles":true}"#, true, false, true),
        (#"{"type":0,"quantity":4,"extraFrosting":false,"addSprinkles":false}"#, false, false, false),
        (#"{"type":0,"quantity":4}"#, false, false, false),
    ])
    func theOlderEncodingInfersSpecialRequests(json: String, special: Bool, frosting: Bool, sprinkles: Bool) throws {
        let order = try Order.decode(json: Data(json.utf8))
        #expect(order.specialRequestEnabled == special)
        #expect(order.extraFrosting == frosting)
        #expect(order.addSprinkles == sprinkles)
    }

    @Test func unknownKeysAreIgnored() throws {
        let order = try Order.decode(
            json: Data(#"{"id":"7","createdAt":"2026-12-02T10:00:00.123Z","type":1,"quantity":3,"costCents":1}"#.utf8))
        #expect(order == Order(type: 1, quantity: 3))
    }

    /// Valid JSON that jansson does not represent, in keys the order does not read, is still an
    /// order (schemathesis found the first: JSONSerialization had read it).
    @Test(arguments: [
        #"{"type":1,"quantity":3,"a\u0000b":[]}"#,
        #"{"type":1,"quantity":3,"big":99999999999999999999}"#,
        #"{"type":1,"quantity":3,"huge":1e999}"#,
    ])
    func unknownKeysBeyondJanssonsLimitsAreIgnoredToo(json: String) throws {
        #expect(try Order.decode(json: Data(json.utf8)) == Order(type: 1, quantity: 3))
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var json: String
        var mentions: [String]
        var testDescription: String { json }
    }

    @Test(arguments: [
        BadCase(json: #"{"type":"two","quantity":3}"#, mentions: ["type", "whole number", "a string"]),
        BadCase(json: #"{"type":2,"quantity":3.5}"#, mentions: ["quantity", "whole number"]),
        // Beyond 64 bits jansson stops reading (RFC 8259 lets a reader limit a number's range).
        BadCase(json: #"{"type":2,"quantity":99999999999999999999}"#, mentions: ["column 41", "too big integer"]),
        BadCase(json: #"{"type":2,"quantity":3,}"#, mentions: ["line 1", "malformed"]),
        BadCase(json: #"{"type":2}"#, mentions: ["quantity", "required"]),
        BadCase(json: #"{"quantity":3}"#, mentions: ["type", "required"]),
        BadCase(json: #"{"type":2,"quantity":3,"name":42}"#, mentions: ["name", "string"]),
        BadCase(json: #"{"type":2,"quantity":3,"extraFrosting":"yes"}"#, mentions: ["extraFrosting", "true or false"]),
        BadCase(json: #"{"type":true,"quantity":3}"#, mentions: ["type", "boolean"]),
        BadCase(json: "{\"type\": 2,\n  \"quantity\": 3 x}", mentions: ["line 2", "column"]),
        BadCase(json: "[1, 2]", mentions: ["JSON object", "array"]),
        BadCase(json: "", mentions: ["empty"]),
        BadCase(json: #"{"type":2,"quantity":3,"name":"\ud800"}"#, mentions: ["malformed"]),
    ])
    func badJSONNamesTheKeyOrThePosition(_ c: BadCase) {
        #expect {
            _ = try Order.decode(json: Data(c.json.utf8))
        } throws: { error in
            let text = "\(error)"
            return c.mentions.allSatisfy { text.contains($0) }
        }
    }

    @Test func aSyntaxErrorGivesLineAndColumn() {
        #expect(throws: OrderDecodingError.self) { try Order.decode(json: Data("{\n\"type\": 1,\n  x".utf8)) }
        do {
            _ = try Order.decode(json: Data("{\n\"type\": 1,\n  x".utf8))
        } catch {
            guard case .malformed(let line, let column, _) = error.kind else {
                Issue.record("expected a position, got \(error)")
                return
            }
            #expect(line == 3)
            #expect(column == 3)
        }
    }
}
