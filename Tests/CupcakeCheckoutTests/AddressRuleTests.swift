import CupcakeCheckout
import Testing

/// Which addresses a webhook may connect to: the rule, one row per kind of address. No traffic
/// is sent anywhere; Tests/webhooks checks the rule at connect time end to end.
@Suite struct AddressRuleTests {
    @Test(
        arguments: [
            ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("10.0.0.1", "private"),
            ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
            ("169.254.169.254", "metadata"), ("169.254.0.1", "link-local"), ("100.64.0.1", "shared"),
            ("0.0.0.0", "unspecified"), ("224.0.0.1", "multicast"), ("255.255.255.255", "broadcast"),
            ("240.0.0.1", "reserved"), ("192.0.2.1", "documentation"), ("198.18.0.1", "benchmarking"),
            ("::1", "loopback"), ("::", "unspecified"), ("fe80::1", "link-local"), ("fc00::1", "unique local"),
            ("fd00:ec2::254", "unique local"), ("ff02::1", "multicast"), ("::ffff:127.0.0.1", "IPv4-mapped"),
            ("::ffff:10.1.2.3", "IPv4-mapped"), ("::ffff:169.254.169.254", "IPv4-mapped"),
            ("::127.0.0.1", "IPv4-compatible"), ("64:ff9b::7f00:1", "NAT64"), ("2001:db8::1", "documentation"),
            ("[::1]", "loopback"),
        ] as [(String, String)])
    func refused(_ address: String, _ kind: String) {
        let refusal = AddressRule.refusal(literal: address)
        #expect(refusal?.contains(kind) == true, "\(address): \(refusal ?? "allowed")")
    }

    @Test(
        arguments: [
            "93.184.216.34", "8.8.8.8", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1",
            "169.253.0.1", "192.167.1.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
        ])
    func allowed(_ address: String) {
        #expect(AddressRule.refusal(literal: address) == nil)
    }

    @Test(arguments: ["example.com", "localhost", "", "1.2.3", "::g"])
    func aNameIsJudgedOnlyOnceResolved(_ text: String) {
        #expect(AddressRule.refusal(literal: text) == nil)
    }
}
