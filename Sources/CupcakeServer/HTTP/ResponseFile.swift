import Foundation

/// An open file to send as a response body. libmicrohttpd takes the descriptor when the response
/// is queued and closes it once sent; a response never queued (its client left) closes it here.
/// The file is one the server made for this response (a backup copy, already unlinked), never
/// the database.
public final class ResponseFile: @unchecked Sendable {
    // Safe: `descriptor` is only touched while holding `lock`.
    private let lock = NSLock()
    private var descriptor: Int32
    /// The body's length in bytes.
    public let size: Int

    /// Takes ownership of `descriptor`, an open file of `size` bytes.
    public init(descriptor: Int32, size: Int) {
        self.descriptor = descriptor
        self.size = size
    }

    /// Hands the descriptor over (to libmicrohttpd) once; nil afterwards.
    func take() -> Int32? {
        lock.withLock {
            guard descriptor >= 0 else { return nil }
            defer { descriptor = -1 }
            return descriptor
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}
