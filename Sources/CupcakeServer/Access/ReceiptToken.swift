import CCrypto
import Foundation

/// The secret that lets the app key reach one order: handed out once, in the 201 that created
/// the order, and kept by the server only as its SHA-256.
///
/// 24 random bytes (192 bits, from the system's generator) in base64url, after `rct_` so that
/// secret scanners and people can tell what it is. A hash needs no salt: the token is random
/// and long, so the hash cannot be reversed by guessing.
struct ReceiptToken: Sendable, Equatable {
    /// The token as the client sends it back in `Order-Token`.
    let text: String

    /// A new random token. Made for every order placed, so it stays cheap: one call into
    /// OpenSSL's DRBG (not a system call per byte: that was 6% of the server's time) and a
    /// table-driven base64url.
    init() {
        var bytes = [UInt8](repeating: 0, count: 24)
        if cupcake_random_bytes(&bytes, Int32(bytes.count)) != 1 {
            // OpenSSL could not seed itself: take the system's generator, slower but as good.
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        }
        text = Self.base64URL(bytes, prefix: "rct_")
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `prefix` and then `bytes` (a multiple of 3) in base64url, without padding.
    static func base64URL(_ bytes: [UInt8], prefix: String) -> String {
        var out = Array(prefix.utf8)
        out.reserveCapacity(out.count + bytes.count / 3 * 4)
        var index = 0
        while index + 2 < bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
            out.append(alphabet[Int(value & 63)])
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What the server stores: the SHA-256 of the token's text.
    var hash: [UInt8] { Self.hash(text) }

    /// The SHA-256 of `text` (as `Order-Token` presents it).
    static func hash(_ text: String) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var bytes = Array(text.utf8)
        let made = bytes.withUnsafeMutableBytes { input in
            digest.withUnsafeMutableBufferPointer { cupcake_sha256(input.baseAddress, input.count, $0.baseAddress) }
        }
        return made == 1 ? digest : []  // never matches, never stored usable
    }

    /// Whether `presented` (an `Order-Token` header) is the token whose hash is `stored`,
    /// compared in constant time.
    static func matches(_ presented: String?, stored: [UInt8]?) -> Bool {
        guard let presented, let stored, stored.count == 32 else { return false }
        let candidate = hash(presented)
        var difference: UInt8 = 0
        for index in 0..<32 { difference |= candidate[index] ^ stored[index] }
        return difference == 0
    }
}
