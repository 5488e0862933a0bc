import Testing

@testable import CupcakeServer

/// Webhook signatures as the Standard Webhooks specification makes them (its own example), and
/// secrets in its `whsec_` form. (Tests/webhooks verifies real deliveries with the
/// specification's Python library.)
@Suite struct WebhookSignatureTests {
    @Test func theSpecificationsExampleSignsAsItSays() {
        // From the specification's README: this secret, id, timestamp and body sign to this.
        let signature = WebhookSignature.sign(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: #"{"test": 2432232314}"#,
            secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func aRotatedSecretSignsBesideTheNewOne() {
        let old = WebhookSignature.newSecret()
        let new = WebhookSignature.newSecret()
        let header = WebhookSignature.header(id: "evt_1", timestamp: 5, body: "{}", secrets: [new, old])
        let parts = header.split(separator: " ").map(String.init)
        #expect(parts.count == 2)
        #expect(parts[0] == WebhookSignature.sign(id: "evt_1", timestamp: 5, body: "{}", secret: new))
        #expect(parts[1] == WebhookSignature.sign(id: "evt_1", timestamp: 5, body: "{}", secret: old))
        #expect(parts[0] != parts[1])
    }

    @Test func newSecretsAreRandomAndDecode() {
        let secrets = (0..<20).map { _ in WebhookSignature.newSecret() }
        #expect(Set(secrets).count == 20)
        for secret in secrets {
            #expect(secret.hasPrefix("whsec_") && secret.utf8.count == 6 + 32)
            #expect(WebhookSignature.key(secret)?.count == 24)
        }
    }

    @Test(arguments: ["whsec_", "whsec_abc", "sk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!!!", ""])
    func aSecretThatIsNotBase64SignsNothing(_ secret: String) {
        #expect(WebhookSignature.sign(id: "evt_1", timestamp: 1, body: "{}", secret: secret) == nil)
    }
}
