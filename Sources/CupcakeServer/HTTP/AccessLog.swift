import CupcakeDomain
import Foundation
import Synchronization

/// One line per request on standard error: time, method, path, status, duration, request id.
/// Also hands out request ids: a random per-process prefix and a counter, so they are unique
/// across restarts without a random number per request.
///
/// Request lines are formatted straight into bytes and written in chunks by a ``LogWriter``
/// thread, at most 50 ms after they are logged, so logging costs a request a copy, not a system
/// call. A `kill -9` can lose the last 50 ms of lines (never an order). Notices are written by
/// the same thread without the wait, so no caller ever waits for standard error (one that
/// stopped reading would otherwise hang a worker that logs an error); ``flush()`` writes
/// everything pending on the caller's thread, for startup and shutdown.
public final class AccessLog: Sendable {
    private let enabled: Bool
    /// The request-id prefix: eight hex digits and a dash.
    private let prefix: [UInt8]
    private let counter = Atomic<UInt64>(0)
    private let writer: LogWriter
    /// Requests or connections turned away by each abuse limit, since the last summary.
    private let connectionsLimited = Atomic<Int>(0)
    private let postsLimited = Atomic<Int>(0)
    private let failedKeysLimited = Atomic<Int>(0)

    /// An abuse limit (see ``AccessPolicy``), for the counts the log reports.
    enum Limit: CaseIterable {
        case connections, posts, failedKeys

        var summary: String {
            switch self {
            case .connections: "connections closed at the per-address limit"
            case .posts: "POSTs answered 429 (rate per address)"
            case .failedKeys: "requests answered 429 after too many failed keys"
            }
        }
    }

    /// - Parameters:
    ///   - enabled: whether to write request lines (startup and errors are always written).
    ///   - write: where chunks of whole lines go; standard error by default.
    public init(enabled: Bool = true, write: (@Sendable (String) -> Void)? = nil) {
        self.enabled = enabled
        prefix = Array(String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16).utf8) + [45]
        var sink = LogWriter.fileDescriptorSink(STDERR_FILENO)
        if let write {
            sink = { chunk in write(String(decoding: chunk, as: UTF8.self)) }
        }
        writer = LogWriter(background: true, sink: sink)
    }

    deinit {
        writer.close()
    }

    /// Counts one request or connection turned away by `limit`.
    func limited(_ limit: Limit) {
        switch limit {
        case .connections: connectionsLimited.add(1, ordering: .relaxed)
        case .posts: postsLimited.add(1, ordering: .relaxed)
        case .failedKeys: failedKeysLimited.add(1, ordering: .relaxed)
        }
    }

    private func takeCount(_ limit: Limit) -> Int {
        switch limit {
        case .connections: connectionsLimited.exchange(0, ordering: .relaxed)
        case .posts: postsLimited.exchange(0, ordering: .relaxed)
        case .failedKeys: failedKeysLimited.exchange(0, ordering: .relaxed)
        }
    }

    /// Writes one notice with what each limit turned away since the last one, if anything.
    func summarizeLimits() {
        let parts = Limit.allCases.compactMap { limit -> String? in
            let count = takeCount(limit)
            return count > 0 ? "\(count) \(limit.summary)" : nil
        }
        if !parts.isEmpty { notice("limits: " + parts.joined(separator: "; ")) }
    }

    /// A new request id such as `9f3a61c2-0000002a`.
    func nextRequestID() -> String {
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return String(unsafeUninitializedCapacity: prefix.count + 16) { buffer in
            var index = 0
            for byte in prefix {
                buffer[index] = byte
                index += 1
            }
            // At least eight digits, more once the counter passes 2^32.
            var digits = max(8, (64 - number.leadingZeroBitCount + 3) / 4)
            while digits > 0 {
                digits -= 1
                buffer[index] = Self.hexDigit(UInt8(truncatingIfNeeded: number >> (UInt64(digits) * 4)))
                index += 1
            }
            return index
        }
    }

    func request(
        method: String, path: String, status: Int, nanoseconds: UInt64, requestID: String, client: String = "",
        aborted: Bool
    ) {
        guard enabled else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let milliseconds = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
        writer.append { line in
            Timestamp.appendISO8601(milliseconds: milliseconds, to: &line)
            line.append(32)
            Self.appendEscaped(method, to: &line)
            line.append(32)
            Self.appendEscaped(path, to: &line)
            line.append(32)
            // An answer that did not reach the client in full is "aborted", with the status it
            // would have had: "aborted(201)" is an order stored whose client never heard.
            if aborted {
                line.append(contentsOf: "aborted".utf8)
                if status > 0 {
                    line.append(40)  // (
                    Self.appendDecimal(UInt64(status), to: &line)
                    line.append(41)  // )
                }
            } else {
                Self.appendDecimal(UInt64(max(0, status)), to: &line)
            }
            line.append(32)
            // Milliseconds with three decimals, from whole microseconds.
            let micros = nanoseconds / 1000
            Self.appendDecimal(micros / 1000, to: &line)
            line.append(46)  // .
            let fraction = micros % 1000
            line.append(UInt8(truncatingIfNeeded: fraction / 100) + 48)
            line.append(UInt8(truncatingIfNeeded: fraction / 10 % 10) + 48)
            line.append(UInt8(truncatingIfNeeded: fraction % 10) + 48)
            line.append(contentsOf: "ms request_id=".utf8)
            line.append(contentsOf: requestID.utf8)
            if !client.isEmpty {
                line.append(contentsOf: " client=".utf8)
                Self.appendEscaped(client, to: &line)
            }
            line.append(10)
        }
    }

    /// Logs a line whatever `enabled` says (startup, shutdown, internal errors), after the
    /// request lines logged before it; the log thread writes it at once.
    public func notice(_ message: String) {
        writer.append(urgent: true) { line in
            line.append(contentsOf: message.utf8)
            line.append(10)
        }
    }

    /// Writes everything logged so far, on this thread.
    public func flush() {
        writer.flush()
    }

    /// Copies text into a log line with every byte that could split or forge a line (controls,
    /// space, DEL, backslash) written as `\xNN`, and every other character that must not reach a
    /// terminal as it is (C1 controls, bidi formatting, line separators: ``TextSafety``) as
    /// `\u{NNNN}`. libmicrohttpd hands over the path already percent-decoded, so `%0A` in a URL
    /// arrives as a newline, and `%E2%80%A8` as U+2028.
    static func appendEscaped(_ text: String, to line: inout [UInt8]) {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            for byte in text.utf8 { appendEscaped(byte, to: &line) }
            return
        }
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                appendEscaped(UInt8(scalar.value), to: &line)
            } else if TextSafety.mustEscape(scalar) {
                line.append(contentsOf: TextSafety.escape(scalar).utf8)
            } else {
                line.append(contentsOf: String(scalar).utf8)
            }
        }
    }

    private static func appendEscaped(_ byte: UInt8, to line: inout [UInt8]) {
        if byte <= 32 || byte == 127 || byte == 92 {
            line.append(92)
            line.append(120)  // x
            line.append(hexDigit(byte >> 4))
            line.append(hexDigit(byte))
        } else {
            line.append(byte)
        }
    }

    /// The lower-case hex digit of the low four bits.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        let nibble = value & 0xF
        return nibble < 10 ? 48 + nibble : 87 + nibble
    }

    private static func appendDecimal(_ value: UInt64, to line: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &line) }
        line.append(UInt8(truncatingIfNeeded: value % 10) + 48)
    }
}
