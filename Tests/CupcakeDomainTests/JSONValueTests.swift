import CupcakeDomain
import CupcakeJSON
import Testing

/// Whole JSON documents read by jansson: the kinds the client and the diagnosis of a bad order
/// tell apart, the errors with their position, and the text written back.
@Suite struct JSONValueTests {
    struct Good: Sendable, CustomTestStringConvertible {
        var text: String
        var value: JSONValue
        var testDescription: String { text }
    }

    static let good: [Good] = [
        Good(text: "7", value: .integer(7)),
        Good(text: "-0", value: .integer(0)),
        Good(text: "9223372036854775807", value: .integer(Int64.max)),
        Good(text: "7.0", value: .number(7)),
        Good(text: "1e2", value: .number(100)),
        Good(text: "true", value: .bool(true)),
        Good(text: " null ", value: .null),
        Good(text: #""na\u006de \u00e9\n""#, value: .string("name é\n")),
        Good(text: #""a\u0000b""#, value: .string("a\u{0}b")),
        Good(text: "[]", value: .array([])),
        Good(text: "[1, [true, {}]]", value: .array([.integer(1), .array([.bool(true), .object([])])])),
        Good(
            text: #"{"z": 1, "a": {"b": null}}"#,
            value: .object([
                .init(key: "z", value: .integer(1)), .init(key: "a", value: .object([.init(key: "b", value: .null)])),
            ])),
        Good(text: #"{"k": 1, "k": 2}"#, value: .object([.init(key: "k", value: .integer(2))])),
    ]

    @Test(arguments: good)
    func readsEachKindAndWritesItBack(_ c: Good) throws {
        let value = try JSONValue.parse(Array(c.text.utf8))
        #expect(value == c.value)
        #expect(try JSONValue.parse(Array(value.text().utf8)) == value)
        #expect(try JSONValue.parse(Array(value.text(pretty: true, sortedKeys: true).utf8)) == value.sortedForTest)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var text: [UInt8]
        var line: Int
        var reason: String
        var beyondLimits = false
        var testDescription: String { String(decoding: text, as: UTF8.self) }
        init(_ text: String, line: Int, reason: String, beyondLimits: Bool = false) {
            self.init(bytes: Array(text.utf8), line: line, reason: reason)
            self.beyondLimits = beyondLimits
        }
        init(bytes: [UInt8], line: Int, reason: String) {
            self.text = bytes
            self.line = line
            self.reason = reason
        }
    }

    static let bad: [Bad] = [
        Bad("[1,]", line: 1, reason: "unexpected token"),
        Bad(#"{"a": 1,}"#, line: 1, reason: "string or '}' expected"),
        Bad("{\n\"a\" 1}", line: 2, reason: "':' expected"),
        Bad("{\"a\":\n\n  tru}", line: 3, reason: "invalid token"),
        Bad("", line: 1, reason: "end of file"),
        Bad("[01]", line: 1, reason: "invalid token"),
        Bad("[1] [2]", line: 1, reason: "end of file expected"),
        Bad("[99999999999999999999]", line: 1, reason: "too big integer", beyondLimits: true),
        Bad("[1e999]", line: 1, reason: "real number overflow", beyondLimits: true),
        Bad(#"{"a\u0000": 1}"#, line: 1, reason: "NUL byte in object key", beyondLimits: true),
        Bad(bytes: [0x22, 0xFF, 0x22], line: 1, reason: "unable to decode byte 0xff"),
        Bad(
            String(repeating: "[", count: 2_049) + String(repeating: "]", count: 2_049), line: 1, reason: "depth",
            beyondLimits: true),
    ]

    @Test(arguments: bad)
    func refusesWhatIsNotStrictJSONAndSaysWhere(_ c: Bad) {
        #expect {
            _ = try JSONValue.parse(c.text)
        } throws: { error in
            guard let error = error as? JSONSyntaxError else { return false }
            return error.line == c.line && error.column >= 1 && error.reason.contains(c.reason)
                && error.isBeyondLimits == c.beyondLimits
        }
    }

    @Test func nestingAsDeepAsJanssonAllowsIsRead() throws {
        let depth = 2_000
        let text = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        var value = try JSONValue.parse(Array(text.utf8))
        var levels = 0
        while let elements = value.elements, let first = elements.first {
            value = first
            levels += 1
        }
        #expect(levels == depth)
        #expect(value == .integer(1))
    }

    @Test func prettyTextIndentsTwoSpacesAndSortsKeysWhenAsked() throws {
        let value = try JSONValue.parse(Array(#"{"b": [1, "x\"y"], "a": {}, "c": []}"#.utf8))
        #expect(value.text() == #"{"b":[1,"x\"y"],"a":{},"c":[]}"#)
        #expect(
            value.text(pretty: true, sortedKeys: true)
                == "{\n  \"a\": {},\n  \"b\": [\n    1,\n    \"x\\\"y\"\n  ],\n  \"c\": []\n}")
    }

    @Test func accessorsAnswerOnlyForTheirKind() throws {
        let value = try JSONValue.parse(Array(#"{"n": 5, "r": 5.5, "w": 5.0, "s": "t", "b": false, "a": [1]}"#.utf8))
        #expect(value["n"]?.integer == 5)
        #expect(value["r"]?.integer == nil)
        #expect(value["w"]?.integer == nil)
        #expect(value["n"]?.wholeNumber == 5)
        #expect(value["w"]?.wholeNumber == 5)
        #expect(value["r"]?.wholeNumber == nil)
        #expect(value["r"]?.number == 5.5)
        #expect(value["n"]?.number == 5)
        #expect(value["b"]?.number == nil)
        #expect(value["b"]?.wholeNumber == nil)
        #expect(value["s"]?.string == "t")
        #expect(value["n"]?.string == nil)
        #expect(value["b"]?.bool == false)
        #expect(value["a"]?.elements == [.integer(1)])
        #expect(value["missing"] == nil)
        #expect(value["a"]?["n"] == nil)
    }
}

extension JSONValue {
    /// The same value with every object's members sorted by key (what `sortedKeys` writes).
    fileprivate var sortedForTest: JSONValue {
        switch self {
        case .array(let elements): .array(elements.map(\.sortedForTest))
        case .object(let members):
            .object(
                members.map { Member(key: $0.key, value: $0.value.sortedForTest) }
                    .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        default: self
        }
    }
}
