import CupcakeDomain
import Foundation
import Synchronization

/// One line per request on standard error: time, method, path, status, duration, request id.
/// Also hands out request ids: a random per-process prefix and a counter, so they are unique
/// across restarts without a random number per request.
public final class AccessLog: Sendable {
    private let enabled: Bool
    private let prefix: String
    private let counter = Atomic<UInt64>(0)
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - enabled: whether to write request lines (startup and errors are always written).
    ///   - write: where lines go; standard error by default.
    public init(enabled: Bool = true, write: (@Sendable (String) -> Void)? = nil) {
        self.enabled = enabled
        prefix = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
        self.write =
            write ?? { line in
                line.utf8CString.withUnsafeBufferPointer { buffer in
                    _ = Glibc.write(STDERR_FILENO, buffer.baseAddress, buffer.count - 1)
                }
            }
    }

    /// A new request id such as `9f3a61c2-0000002a`.
    func nextRequestID() -> String {
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let digits = String(number, radix: 16)
        return prefix + "-" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    func request(method: String, path: String, status: Int, nanoseconds: UInt64, requestID: String, aborted: Bool) {
        guard enabled else { return }
        let millis = Double(nanoseconds) / 1_000_000
        let duration = String(format: "%.3fms", millis)
        let now = Timestamp.iso8601(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let statusText = aborted && status == 0 ? "aborted" : String(status)
        write("\(now) \(method) \(path) \(statusText) \(duration) request_id=\(requestID)\n")
    }

    /// Writes a line whatever `enabled` says (startup, shutdown, internal errors).
    public func notice(_ message: String) {
        write(message + "\n")
    }
}
