import Glibc

/// Which network addresses a server-side request (a webhook delivery) may connect to: public
/// unicast addresses only, unless private ones are allowed. Refused: unspecified, loopback,
/// private (RFC 1918, unique local), shared (100.64/10), link-local (with the cloud metadata
/// service at 169.254.169.254 and fd00:ec2::254), multicast, broadcast, documentation and
/// benchmarking ranges, reserved space, and IPv6 forms that carry an IPv4 address (IPv4-mapped,
/// IPv4-compatible, NAT64), judged by the IPv4 address inside.
public enum AddressRule {
    /// Why an address is refused, in words; nil when it may be connected to.
    public static func refusal(ipv4 bytes: [UInt8]) -> String? {
        guard bytes.count == 4 else { return "not an IPv4 address" }
        let (a, b, c) = (bytes[0], bytes[1], bytes[2])
        switch a {
        case 0: return "an unspecified (0.0.0.0/8) address"
        case 10: return "a private address"
        case 127: return "a loopback address"
        case 100 where b & 0xC0 == 64: return "a shared (carrier NAT) address"
        case 169 where b == 254: return "a link-local or metadata address"
        case 172 where b & 0xF0 == 16: return "a private address"
        case 192 where b == 168: return "a private address"
        case 192 where b == 0 && (c == 0 || c == 2): return "a reserved or documentation address"
        case 198 where b & 0xFE == 18: return "a benchmarking address"
        case 198 where b == 51 && c == 100, 203 where b == 0 && c == 113: return "a documentation address"
        case 224...239: return "a multicast address"
        case 240...255: return "a reserved or broadcast address"
        default: return nil
        }
    }

    /// The same for an IPv6 address (16 bytes).
    public static func refusal(ipv6 bytes: [UInt8]) -> String? {
        guard bytes.count == 16 else { return "not an IPv6 address" }
        let first10Zero = bytes[0..<10].allSatisfy { $0 == 0 }
        if first10Zero, bytes[10] == 0xFF, bytes[11] == 0xFF {
            return refusal(ipv4: Array(bytes[12..<16])).map { "an IPv4-mapped address of \($0)" }
        }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) {
            return bytes[15] == 1 ? "a loopback address" : "an unspecified address"
        }
        if first10Zero, bytes[10] == 0, bytes[11] == 0 { return "an IPv4-compatible address" }
        // 64:ff9b::/96, NAT64: the IPv4 address inside decides.
        if bytes[0] == 0, bytes[1] == 0x64, bytes[2] == 0xFF, bytes[3] == 0x9B, bytes[4..<12].allSatisfy({ $0 == 0 }) {
            return refusal(ipv4: Array(bytes[12..<16])).map { "a NAT64 address of \($0)" }
        }
        if bytes[0] & 0xFE == 0xFC { return "a unique local (private) address" }
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return "a link-local address" }
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0xC0 { return "a site-local address" }
        if bytes[0] == 0xFF { return "a multicast address" }
        if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0x0D, bytes[3] == 0xB8 { return "a documentation address" }
        return nil
    }

    /// The same for an address in text (`127.0.0.1`, `::1`); nil also for text that is not an
    /// address (a name, which is judged once resolved).
    public static func refusal(literal text: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return refusal(ipv4: withUnsafeBytes(of: &v4) { Array($0) })
        }
        var v6 = in6_addr()
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            return refusal(ipv6: withUnsafeBytes(of: &v6) { Array($0) })
        }
        return nil
    }

    /// The same for a socket address libcurl is about to connect to; with the address in text.
    static func refusal(_ address: UnsafePointer<sockaddr>, family: Int32) -> (text: String, refusal: String?) {
        switch family {
        case AF_INET:
            let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
            }
            return (bytes.map(String.init).joined(separator: "."), refusal(ipv4: bytes))
        case AF_INET6:
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                var copy = pointer.pointee.sin6_addr
                _ = inet_ntop(AF_INET6, &copy, &text, socklen_t(text.count))
                return withUnsafeBytes(of: copy) { Array($0) }
            }
            return (
                String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                refusal(ipv6: bytes)
            )
        default:
            return ("family \(family)", "not an internet address")
        }
    }
}
