import Foundation

/// A TCP port nothing listens on right now, for a program that must be told its port before it
/// starts (PostgreSQL, nginx). Another process could take it in between; the helpers that use
/// it retry with a new one when the start fails.
public enum FreePort {
    /// Binds port 0 on `host`, reads the port the kernel chose, and closes the socket.
    public static func next(host: String = "127.0.0.1") throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError(message: "socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        inet_pton(AF_INET, host, &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw TestSocketError(message: "bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
