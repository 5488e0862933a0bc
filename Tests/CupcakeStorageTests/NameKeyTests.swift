import CupcakeStorage
import Testing

/// The name key is what prefix filters and the name sort compare: lower-cased with Unicode's
/// full rules. ASCII names take a byte-wise fast path, which must agree with Swift's rules.
@Suite struct NameKeyTests {
    @Test(arguments: [
        ("Taylor Swift", "taylor swift"),
        ("taylor swift", "taylor swift"),
        ("O'NEIL-SMITH 3rd", "o'neil-smith 3rd"),
        ("@[`{", "@[`{"),  // the neighbours of A-Z and a-z stay as they are
        ("", ""),
        ("ÉLODIE Dubois", "élodie dubois"),
        ("ΣΟΦΙΑ", "σοφια"),
        ("Ⅻ Zoë", "ⅻ zoë"),
    ])
    func lowerCasesLikeSwift(name: String, expected: String) {
        #expect(OrderQuery.nameKey(name) == expected)
        #expect(OrderQuery.nameKey(name) == name.lowercased())
    }

    @Test func everyASCIIByteAgreesWithSwift() {
        for byte in UInt8(0)...UInt8(127) {
            let name = "x" + String(UnicodeScalar(byte)) + "Y"
            #expect(OrderQuery.nameKey(name) == name.lowercased(), "byte \(byte)")
        }
    }
}
