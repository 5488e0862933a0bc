import CupcakeTestSupport
import Foundation
import Testing

@testable import CupcakeDomain

/// The fast path must never disagree with `JSONDecoder`: whatever it accepts, the full decoder
/// decodes to the same order; whatever is unusual, it hands over.
@Suite struct FastDecoderTests {
    static func fast(_ json: String) -> Order? {
        Array(json.utf8).withUnsafeBufferPointer { OrderFastDecoder.decode($0) }
    }

    static func foundation(_ json: String) -> Order? {
        try? JSONDecoder().decode(Order.self, from: Data(json.utf8))
    }

    static let accepted = [
        #"{"type":2,"quantity":5,"specialRequestEnabled":true,"extraFrosting":true,"addSprinkles":false,"name":"Taylor","streetAddress":"1 Main St","city":"Nashville","zip":"37201"}"#,
        #" { "quantity" : 4 , "type" : 0 } "#,
        "{\n\t\"type\": 1,\r\n\"quantity\": 3, \"extraFrosting\": true}",
        #"{"type":3,"quantity":20,"addSprinkles":true,"specialRequestEnabled":false}"#,
        #"{"type":0,"quantity":3,"name":null,"zip":null,"extraFrosting":null}"#,
        #"{"type":-1,"quantity":-0,"name":"Zoë Ünïcode 🍰"}"#,
        #"{"type":0,"quantity":3,"id":"abc","createdAt":"2026-12-02T10:00:00.123Z","costCents":1600,"n":null,"b":false}"#,
        #"{"type":9223372036854775807,"quantity":-9223372036854775807}"#,
        #"{"type":1,"quantity":3,"name":"  padded  "}"#,
    ]

    @Test(arguments: accepted)
    func acceptedBodiesDecodeExactlyAsFoundationDoes(_ json: String) throws {
        let fast = try #require(Self.fast(json), "the fast path should take this body")
        #expect(fast == Self.foundation(json))
    }

    static let handedOver = [
        #"{"type":2,"quantity":3.0}"#,
        #"{"type":2,"quantity":3e0}"#,
        #"{"type":2,"quantity":03}"#,
        #"{"type":2,"quantity":99999999999999999999}"#,
        #"{"type":2,"quantity":3,"name":"esc\"aped"}"#,
        #"{"type":2,"quantity":3,"name":"\u0041"}"#,
        #"{"type":2,"quantity":3,"extra":{"nested":true}}"#,
        #"{"type":2,"quantity":3,"extra":[1]}"#,
        #"{"type":2,"quantity":3,"type":1}"#,
        #"{"type":2,"quantity":3,"x":1,"x":2}"#,
        #"{"type":"2","quantity":3}"#,
        #"{"type":2}"#,
        #"{"type":2,"quantity":3,}"#,
        #"{"type":2,"quantity":3} x"#,
        #"[{"type":2,"quantity":3}]"#,
        "{\"type\":2,\"quantity\":3,\"name\":\"tab\there\"}",
        "",
        "\u{FEFF}{\"type\":2,\"quantity\":3}",
    ]

    @Test(arguments: handedOver)
    func unusualBodiesAreHandedToFoundation(_ json: String) {
        #expect(Self.fast(json) == nil)
    }

    @Test func invalidUTF8IsHandedOver() {
        var bytes = Array(#"{"type":2,"quantity":3,"name":"x"}"#.utf8)
        bytes[31] = 0xFF
        #expect(bytes.withUnsafeBufferPointer { OrderFastDecoder.decode($0) } == nil)
    }

    @Test func randomMutationsNeverDisagree() {
        // A seeded walk over byte flips, truncations and insertions of a valid body.
        var generator = SplitMix64(seed: 0xC0FFEE)
        let base = Array(Self.accepted[0].utf8)
        let alphabet = Array(#"{}[]":,-0123456789.eEtruefalsn \"#.utf8)
        var disagreements: [String] = []
        for _ in 0..<3000 {
            var bytes = base
            for _ in 0..<Int(generator.next() % 3 + 1) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.removeSubrange(position...)
                default: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            let fast = bytes.withUnsafeBufferPointer { OrderFastDecoder.decode($0) }
            if let fast, fast != (try? JSONDecoder().decode(Order.self, from: Data(bytes))) {
                disagreements.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(3))")
    }
}
