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

    /// A new random token.
    init() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<24).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        text =
            "rct_"
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
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
