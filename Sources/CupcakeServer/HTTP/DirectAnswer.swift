import CMicroHTTPD
import Glibc

/// A refusal written straight to the client's socket, for the one case libmicrohttpd cannot
/// answer at all: a head that filled the connection's memory so nearly that the answer's status
/// line and headers no longer fit beside it.
///
/// libmicrohttpd 0.9.75 builds an answer's headers in the connection's memory and, when they do
/// not fit, closes the connection without a byte (its later versions free the head and answer
/// 500 instead). The head is over the server's limit by then, so nothing has been done with the
/// request; this writes the refusal (a fixed status line, `Connection: close`, the
/// problem+json body) before libmicrohttpd closes the connection. The socket is libmicrohttpd's,
/// which is not writing to it: the previous answer on the connection was sent in full before
/// this request's head was read, and this request has no answer queued. One non-blocking
/// `send`: a fresh socket's send buffer holds a few hundred bytes, and if it does not, the
/// client gets the close it would have had anyway. Then `shutdown(SHUT_WR)`, so that the client
/// reads the answer and an end of stream even if libmicrohttpd's close resets the connection
/// over a body it did not read. `HeadSizeTests` sweeps heads up to 64 KiB and checks every one
/// gets a whole answer.
enum DirectAnswer {
    /// What the connection must have free beside what the head keeps (``RequestHead/keptBytes``)
    /// for libmicrohttpd to build an answer: the read-ahead libmicrohttpd may hold (a few KiB
    /// when the head had to grow its read buffer) and the answer's status line and headers.
    static let reserveBytes = 4 * 1024

    /// Writes `response` (status, headers, body) to the connection's socket; whether all of it
    /// was written.
    static func send(_ response: HTTPResponse, requestID: String, on connection: OpaquePointer) -> Bool {
        let fd = cupcake_connection_fd(connection)
        guard fd >= 0 else { return false }
        let body = response.body
        var text = "HTTP/1.1 \(response.status) \(reason(response.status))\r\n"
        text += "Date: \(date())\r\nConnection: close\r\nRequest-Id: \(requestID)\r\n"
        for header in response.headers where !HTTPResponse.sameName(header.name, "Connection") {
            text += "\(header.name): \(header.value)\r\n"
        }
        text += "Content-Length: \(body.count)\r\n\r\n"
        let bytes = Array(text.utf8) + body
        let sent = bytes.withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        shutdown(fd, Int32(SHUT_WR))
        return sent == bytes.count
    }

    private static func reason(_ status: Int) -> String {
        MHD_get_reason_phrase_for(UInt32(status)).map { String(cString: $0) } ?? "Error"
    }

    /// The time as an IMF-fixdate (RFC 9110 §5.6.7), as libmicrohttpd writes it.
    private static func date() -> String {
        var now = time(nil)
        var fields = tm()
        gmtime_r(&now, &fields)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &fields)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
