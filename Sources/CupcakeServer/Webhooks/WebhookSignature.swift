import CCrypto

/// Signatures as the Standard Webhooks specification makes them: the endpoint's secret is
/// `whsec_` and base64 of random bytes; a delivery's `webhook-signature` is `v1,` and base64 of
/// HMAC-SHA256 over `id.timestamp.body`, one per secret that signs, separated by spaces (two
/// while a rotated secret's grace period runs). HMAC and base64 are OpenSSL's.
enum WebhookSignature {
    /// A new secret: 24 random bytes.
    static func newSecret() -> String {
        var bytes = [UInt8](repeating: 0, count: 24)
        if cupcake_random_bytes(&bytes, Int32(bytes.count)) != 1 {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        }
        return "whsec_" + base64(bytes)
    }

    /// The `webhook-signature` header for a delivery: `v1,<signature>` for each secret.
    static func header(id: String, timestamp: Int64, body: String, secrets: [String]) -> String {
        secrets.compactMap { sign(id: id, timestamp: timestamp, body: body, secret: $0) }.joined(separator: " ")
    }

    /// `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` with the secret's key; nil for a
    /// secret that is not `whsec_` and base64.
    static func sign(id: String, timestamp: Int64, body: String, secret: String) -> String? {
        guard let key = key(secret) else { return nil }
        let content = Array("\(id).\(timestamp).\(body)".utf8)
        var mac = [UInt8](repeating: 0, count: 32)
        let made = key.withUnsafeBytes { keyBytes in
            content.withUnsafeBytes { contentBytes in
                cupcake_hmac_sha256(
                    keyBytes.baseAddress, keyBytes.count, contentBytes.baseAddress, contentBytes.count, &mac)
            }
        }
        return made == 1 ? "v1," + base64(mac) : nil
    }

    /// The key in a `whsec_` secret.
    static func key(_ secret: String) -> [UInt8]? {
        guard secret.hasPrefix("whsec_") else { return nil }
        let text = Array(secret.utf8.dropFirst(6))
        guard !text.isEmpty, text.count % 4 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: text.count / 4 * 3)
        let decoded = cupcake_base64_decode(text, Int32(text.count), &out)
        guard decoded == out.count else { return nil }
        // EVP_DecodeBlock counts padding as zero bytes: drop them.
        let padding = text.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        return Array(out.prefix(out.count - padding))
    }

    /// Standard base64, padded.
    static func base64(_ bytes: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: 4 * ((bytes.count + 2) / 3) + 1)
        let written = cupcake_base64_encode(bytes, Int32(bytes.count), &out)
        return String(decoding: out.prefix(Int(max(0, written))), as: UTF8.self)
    }
}
