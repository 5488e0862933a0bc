import CMicroHTTPD
import Foundation
import Synchronization

/// Connections whose request line held an escaped NUL byte (`%00`), until their request is seen.
///
/// libmicrohttpd hands the handler the path and query arguments already unescaped, as C
/// strings, so a `%00` cut them short: `/api/cupcakes/2%00` arrived as `/api/cupcakes/2` and
/// named order 2, and `?name_prefix=a%00b` searched for `a`. libmicrohttpd lets a server bring its
/// own unescaping (`MHD_OPTION_UNESCAPE_CALLBACK`); ours (``unescapeCallback``) notes the
/// connection when it meets `%00` and then unescapes with libmicrohttpd's own
/// `MHD_http_unescape`. The access handler answers such a request 400 before anything else.
final class EscapedNULMarks: @unchecked Sendable {
    // Safe: `connections` is only touched while holding `lock`; `count` mirrors its size so that
    // the common case (no marks at all) costs one atomic load.
    private let lock = NSLock()
    private var connections: Set<UnsafeMutableRawPointer> = []
    private let count = Atomic<Int>(0)

    /// Notes that `connection`'s request line held `%00`.
    func mark(_ connection: OpaquePointer) {
        lock.withLock {
            if connections.insert(UnsafeMutableRawPointer(connection)).inserted {
                count.add(1, ordering: .relaxed)
            }
        }
    }

    /// Whether `connection`'s request held `%00`; forgets the mark.
    func take(_ connection: OpaquePointer) -> Bool {
        guard count.load(ordering: .relaxed) > 0 else { return false }
        return lock.withLock {
            guard connections.remove(UnsafeMutableRawPointer(connection)) != nil else { return false }
            count.subtract(1, ordering: .relaxed)
            return true
        }
    }

    /// Whether `text` (a NUL-terminated C string, still escaped) holds `%00`.
    static func holdsEscapedNUL(_ text: UnsafePointer<CChar>) -> Bool {
        var pointer = text
        while pointer.pointee != 0 {
            if pointer.pointee == 0x25, pointer[1] == 0x30, pointer[2] == 0x30 { return true }  // "%00"
            pointer += 1
        }
        return false
    }
}

/// libmicrohttpd's unescape callback (see ``EscapedNULMarks``); its `cls` is the server.
let unescapeCallback: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = {
    cls, connection, text in
    guard let text else { return 0 }
    if let cls, let connection, EscapedNULMarks.holdsEscapedNUL(text) {
        Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().escapedNULs.mark(connection)
    }
    return MHD_http_unescape(text)
}
