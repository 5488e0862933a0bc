import CMicroHTTPD
import Foundation

/// A response body that is written while it is sent (Server-Sent Events): libmicrohttpd asks
/// for bytes when the socket has room; with none waiting, the connection is suspended (it holds
/// no worker and is not polled) until ``write(_:)`` or ``finish()`` resumes it. That is the
/// pattern microhttpd.h prescribes for "no body data yet" in our polling mode (a content reader
/// returning 0 without suspending would spin a worker).
public final class ResponseStream: @unchecked Sendable {
    // Safe: every field is only touched while holding `lock`.
    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var finished = false
    private var suspended = false
    private var gone = false
    private var connection: OpaquePointer?
    /// The most bytes kept for a client that does not read them: past it the stream ends (the
    /// client reconnects with Last-Event-ID and misses nothing).
    static let maximumPendingBytes = 1 << 20
    /// Called once, when libmicrohttpd is done with the stream (sent in full, or the client left).
    let onClose: @Sendable () -> Void

    /// Creates a stream that begins with `initial` bytes.
    init(initial: [UInt8] = [], onClose: @escaping @Sendable () -> Void = {}) {
        pending = initial
        self.onClose = onClose
    }

    /// Whether the client is gone or the stream finished (nothing more will be sent).
    var isOver: Bool { lock.withLock { gone || finished } }

    /// Adds bytes to send; false when the stream is over.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        let (accepted, wake) = lock.withLock { () -> (Bool, OpaquePointer?) in
            guard !gone, !finished else { return (false, nil) }
            if pending.count + bytes.count > Self.maximumPendingBytes {
                finished = true
            } else {
                pending += bytes
            }
            return (true, takeSuspended())
        }
        if let wake { MHD_resume_connection(wake) }
        return accepted
    }

    /// Ends the stream once what is pending has been sent.
    func finish() {
        let wake = lock.withLock { () -> OpaquePointer? in
            finished = true
            return takeSuspended()
        }
        if let wake { MHD_resume_connection(wake) }
    }

    /// The connection to resume, if it is suspended; the caller resumes it after unlocking.
    private func takeSuspended() -> OpaquePointer? {
        guard suspended, let connection else { return nil }
        suspended = false
        return connection
    }

    /// The libmicrohttpd response that reads this stream (chunked, of unknown size).
    func makeResponse(for connection: OpaquePointer) -> OpaquePointer? {
        lock.withLock { self.connection = connection }
        let retained = Unmanaged.passRetained(self).toOpaque()
        guard let response = MHD_create_response_from_callback(UInt64.max, 4096, streamReader, retained, streamFreed)
        else {
            Unmanaged<ResponseStream>.fromOpaque(retained).release()
            return nil
        }
        return response
    }

    /// libmicrohttpd's read: up to `max` pending bytes; the end; or nothing yet, suspended.
    fileprivate func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        lock.withLock {
            if !pending.isEmpty {
                let count = min(max, pending.count)
                pending.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress {
                        UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: count)
                    }
                }
                pending.removeFirst(count)
                return count
            }
            if finished || gone { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
            // Under the lock, so a write cannot try to resume the connection before it is
            // suspended.
            if let connection {
                suspended = true
                MHD_suspend_connection(connection)
            }
            return 0
        }
    }

    fileprivate func freed() {
        lock.withLock {
            gone = true
            pending = []
            connection = nil
            suspended = false
        }
        onClose()
    }
}

private let streamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return -2 }
    let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeUnretainedValue()
    return stream.read(into: buffer, max: max)
}

private let streamFreed: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeRetainedValue()
    stream.freed()
}
