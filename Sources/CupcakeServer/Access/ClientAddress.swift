import Foundation

/// Who a request comes from: the peer's address, or behind a trusted proxy the address that
/// proxy reports in `X-Forwarded-For`.
enum ClientAddress {
    /// The client's address. `X-Forwarded-For` is read only when the peer is one of
    /// `trustedProxies`, every line of it as one list (RFC 9110 §5.3: a proxy may append a line
    /// of its own instead of extending the client's), from its right-hand end: each trusted proxy
    /// appends the address it received from, so the first untrusted address from the right is
    /// the one no client could forge. Anything unreadable there leaves the last trusted hop.
    static func of(peer: String, forwardedFor lines: [String], trustedProxies: Set<String>) -> String {
        guard trustedProxies.contains(peer), !lines.isEmpty else { return peer }
        var client = peer
        for hop in lines.joined(separator: ",").split(separator: ",").reversed() {
            let address = hop.trimmingOptionalWhitespace
            guard isAddress(address) else { return client }
            client = address
            if !trustedProxies.contains(address) { return address }
        }
        return client
    }

    /// Whether `text` is an IPv4 or IPv6 address.
    static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Whether a `Host` header names this machine's loopback: `localhost` (or a name under
    /// it, RFC 6761), an address in 127.0.0.0/8, or `[::1]`; with or without a port.
    static func isLoopbackHost(_ host: String) -> Bool {
        // Every keyless request asks this: the usual answers without making a string.
        var bytes = Substring(host).utf8
        if let colon = bytes.lastIndex(of: UInt8(ascii: ":")), !bytes.contains(UInt8(ascii: "]")),
            bytes[bytes.index(after: colon)...].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        {
            bytes = bytes[..<colon]
        }
        if bytes.elementsEqual("127.0.0.1".utf8) || bytes.elementsEqual("localhost".utf8) { return true }
        var name = host.lowercased()
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            name = String(name[name.index(after: name.startIndex)..<close])
            return name == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, name, &address) == 1 else { return false }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }

    /// Whether an address to listen on is loopback only.
    static func isLoopbackListen(_ host: String) -> Bool {
        if host == "::1" || host == "[::1]" { return true }
        return isLoopbackHost(host)
    }
}
