import CMicroHTTPD
import Glibc

/// A request's head as libmicrohttpd parsed it, checked before anything else happens to the
/// request: RFC 9112's framing rules, and the server's limits on the head's size.
///
/// libmicrohttpd 0.9.75 parses leniently where RFC 9112 asks a server to refuse, and a proxy in
/// front that read the same bytes strictly would disagree about where one request ends and the
/// next begins. Each rule here names what libmicrohttpd accepts and the answer the RFC asks for;
/// the framing corpus (`FramingCorpusTests`) sends every case to nginx as well, as the reference.
///
/// libmicrohttpd parses the head in place in the connection's memory: the request line and each
/// field line stay where they were received (line ends and the colon overwritten by NUL bytes),
/// and the handler is given pointers into them. Two rules below read that layout: a NUL byte
/// received inside a line cuts the C string libmicrohttpd hands over short, and leaves bytes that
/// belong to no string between it and the next line; and an obs-fold continuation is joined into
/// a new copy outside the head. Both are refused: nginx refuses them too, and RFC 9110 §5.5 says
/// a field holding NUL must be refused or cleaned, never passed on cut short.
struct RequestHead {
    /// What the server accepts of a head.
    struct Limits: Sendable {
        /// The request line and header fields as received, line ends included.
        var headBytes: Int
        /// Header field lines.
        var fields: Int
        /// One field line: its name, colon, value.
        var fieldLineBytes: Int
        /// What libmicrohttpd may keep of the head in the connection's memory: the bytes as
        /// received, its copy of the Cookie field (which it splits into cookies), and an index
        /// entry for each field, cookie and query argument.
        var memoryBytes: Int
        /// Largest body accepted.
        var bodyBytes: Int
    }

    /// What libmicrohttpd keeps in the connection's memory for each field, cookie and query
    /// argument it indexes (its `struct MHD_HTTP_Header`, 48 bytes on 64-bit, rounded up).
    static let indexEntryBytes = 64

    /// One header field as libmicrohttpd holds it.
    struct Field {
        var name: UnsafePointer<CChar>
        var nameCount: Int
        var value: UnsafePointer<CChar>
        var valueCount: Int
    }

    /// The head of the request on `connection`, at libmicrohttpd's first call for it.
    ///
    /// - Parameters:
    ///   - method: the method as libmicrohttpd hands it (the start of the head).
    ///   - url: the target, unescaped in place.
    ///   - version: the version as received.
    ///   - rawTarget: the target as received, measured before libmicrohttpd unescaped it.
    /// - Returns: why it is refused, or nil. Every refusal is answered and the connection closed:
    ///   the bytes after a head the server does not understand cannot be trusted to start a
    ///   request.
    static func refusal(
        of connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>, rawTarget: RawTarget, limits: Limits
    ) -> Problem? {
        let http11 = strcmp(version, "HTTP/1.1") == 0
        guard http11 || strcmp(version, "HTTP/1.0") == 0 else {
            return Problem.versionNotSupported("This server speaks HTTP/1.1 and HTTP/1.0 only.")
        }
        let headBytes = cupcake_connection_head_size(connection)
        let headStart = UnsafeRawPointer(method)
        let headEnd = headStart + headBytes
        // The request line: method, one space, the target, one space, the version.
        let methodCount = strlen(method)
        guard UnsafeRawPointer(url) == headStart + methodCount + 1 else {
            return Problem.badRequest(
                "The request line must be the method, one space, the target, one space, the version.")
        }
        if let problem = rawTarget.problem { return problem }
        guard UnsafeRawPointer(version) == UnsafeRawPointer(url) + rawTarget.count + 1 else {
            return Problem.badRequest("The request's target holds a NUL byte.")
        }
        return withFields(of: connection, atMost: limits.fields) { fields, count in
            checked(
                fields, count: count, connection: connection, version: version, headBytes: headBytes,
                headEnd: headEnd, http11: http11, limits: limits)
        }
    }

    /// The checks on the header fields (`count` of them in all; `fields` holds the first ones).
    private static func checked(
        _ fields: UnsafeBufferPointer<Field>, count: Int, connection: OpaquePointer, version: UnsafePointer<CChar>,
        headBytes: Int, headEnd: UnsafeRawPointer, http11: Bool, limits: Limits
    ) -> Problem? {
        if let refusal = sizeRefusal(connection, headBytes: headBytes, fields: fields, count: count, limits: limits) {
            return refusal
        }
        // Each field line follows the one before with nothing between but its line end (CRLF or
        // LF, overwritten with NULs), and the head ends with an empty line.
        var lineEnd = UnsafeRawPointer(version) + strlen(version)
        for field in fields {
            if let problem = fieldProblem(field) { return Problem.badRequest(problem) }
            let start = UnsafeRawPointer(field.name)
            guard start > lineEnd, start <= headEnd, onlyLineEnd(from: lineEnd, to: start),
                UnsafeRawPointer(field.value) >= start, UnsafeRawPointer(field.value) + field.valueCount < headEnd
            else {
                return Problem.badRequest(
                    "The header field \(name(field)) holds a NUL byte or continues on a second line (obs-fold).")
            }
            lineEnd = UnsafeRawPointer(field.value) + field.valueCount
        }
        guard lineEnd < headEnd, onlyLineEnd(from: lineEnd, to: headEnd) else {
            return Problem.badRequest("A header field holds a NUL byte.")
        }
        return framingRefusal(fields, http11: http11, limits: limits)
    }

    /// The head's size against the limits, and what libmicrohttpd keeps of it against the
    /// connection's memory.
    private static func sizeRefusal(
        _ connection: OpaquePointer, headBytes: Int, fields: UnsafeBufferPointer<Field>, count: Int, limits: Limits
    ) -> Problem? {
        if headBytes > limits.headBytes {
            return Problem.headTooLarge(
                "The request's head is \(headBytes) bytes; this server takes at most \(limits.headBytes).")
        }
        if count > limits.fields {
            return Problem.headTooLarge(
                "The request has \(count) header fields; this server takes at most \(limits.fields).")
        }
        if let long = fields.first(where: { $0.nameCount + 1 + $0.valueCount > limits.fieldLineBytes }) {
            return Problem.headTooLarge("The header field \(name(long)) is longer than \(limits.fieldLineBytes) bytes.")
        }
        let memory = keptBytes(connection, headBytes: headBytes, fields: count)
        if memory > limits.memoryBytes {
            return Problem.headTooLarge(
                "The request's head, its cookies and query arguments take \(memory) bytes to hold; "
                    + "this server keeps at most \(limits.memoryBytes) for one.")
        }
        return nil
    }

    /// What libmicrohttpd keeps of the head in the connection's memory (see ``Limits/memoryBytes``).
    static func keptBytes(_ connection: OpaquePointer, headBytes: Int, fields: Int) -> Int {
        let cookie = MHD_lookup_connection_value(connection, .HEADER_KIND, "Cookie").map { strlen($0) + 1 } ?? 0
        let entries =
            fields + Int(MHD_get_connection_values(connection, .COOKIE_KIND, nil, nil))
            + Int(MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, nil, nil))
        return headBytes + cookie + entries * indexEntryBytes
    }

    /// RFC 9112 §6: the body's length must be unambiguous, and §3.2: Host once in HTTP/1.1.
    private static func framingRefusal(_ fields: UnsafeBufferPointer<Field>, http11: Bool, limits: Limits) -> Problem? {
        var lengths: [Field] = []
        var encodings: [Field] = []
        var hosts: [Field] = []
        for field in fields {
            if matches(field, "Content-Length") {
                lengths.append(field)
            } else if matches(field, "Transfer-Encoding") {
                encodings.append(field)
            } else if matches(field, "Host") {
                hosts.append(field)
            }
        }
        if !encodings.isEmpty {
            guard http11 else {
                return Problem.badRequest("An HTTP/1.0 request cannot have a Transfer-Encoding.")
            }
            if !lengths.isEmpty {
                return Problem.badRequest("The request has both Transfer-Encoding and Content-Length.")
            }
            // Exactly: libmicrohttpd reads a body as chunked only for this value (not with the
            // whitespace after it a trim would forgive), and waits for the peer to close otherwise.
            guard encodings.count == 1, matches(encodings[0].value, encodings[0].valueCount, "chunked") else {
                return Problem.notImplemented("This server takes a Transfer-Encoding of exactly chunked, and no other.")
            }
        }
        if lengths.count > 1 {
            return Problem.badRequest("The request has more than one Content-Length.")
        }
        if let length = lengths.first {
            let digits = trimmed(length)
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return Problem.badRequest("The request's Content-Length is not a number of bytes.")
            }
            var bytes: Int64 = 0
            for digit in digits {
                let (times, overflowTimes) = bytes.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(Int64(digit - 0x30))
                guard !overflowTimes, !overflowSum else {
                    return Problem.badRequest("The request's Content-Length is too large to be one.")
                }
                bytes = sum
            }
            if bytes > limits.bodyBytes {
                return Problem.payloadTooLarge(limit: limits.bodyBytes)
            }
        }
        if hosts.count > 1 || (http11 && hosts.isEmpty) {
            return Problem.badRequest("An HTTP/1.1 request needs exactly one Host header.")
        }
        if let host = hosts.first, !isHost(trimmed(host)) {
            return Problem.badRequest("The Host header is not a host name or address with an optional port.")
        }
        return nil
    }

    /// A field name must be a token (RFC 9110 §5.1), which also refuses whitespace before the
    /// colon (RFC 9112 §5.1: "No whitespace is allowed between the field name and colon");
    /// a value holds no control character but tab (§5.5: CR, LF and NUL must be refused).
    private static func fieldProblem(_ field: Field) -> String? {
        let name = UnsafeRawBufferPointer(start: field.name, count: field.nameCount)
        if let last = name.last, last == 0x20 || last == 0x09 {
            return "A header field has whitespace between its name and the colon."
        }
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            return "A header field's name is empty or holds a character a name cannot."
        }
        let value = UnsafeRawBufferPointer(start: field.value, count: field.valueCount)
        if value.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            return "The header field \(Self.name(field)) holds a control character."
        }
        return nil
    }

    /// Whether only a line end (one or two bytes, as libmicrohttpd left it: NULs) lies between.
    private static func onlyLineEnd(from start: UnsafeRawPointer, to end: UnsafeRawPointer) -> Bool {
        let count = end - start
        guard (1...4).contains(count) else { return false }
        return UnsafeRawBufferPointer(start: start, count: count).allSatisfy { $0 == 0 }
    }

    /// RFC 9110 §5.6.2's tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool { tokenBytes[Int(byte)] }

    /// Which bytes are tchar, as a table: every request's every field name is checked.
    private static let tokenBytes: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        return (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
            || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    /// Which bytes may stand in a host name (RFC 3986's unreserved, pct-encoded and sub-delims).
    private static let hostBytes: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        return (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
            || "-._~!$&'()*+,;=%".utf8.contains(byte)
    }

    /// RFC 9110 §7.2: `uri-host [ ":" port ]`; an IP literal in brackets, or a name or IPv4
    /// address of unreserved characters, percent escapes and sub-delims.
    static func isHost<Bytes: BidirectionalCollection>(_ text: Bytes) -> Bool where Bytes.Element == UInt8 {
        var host = text[...]
        if host.first == UInt8(ascii: "[") {
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let literal = host[host.index(after: host.startIndex)..<close]
            guard !literal.isEmpty, literal.allSatisfy({ isHexDigit($0) || $0 == 0x3A || $0 == 0x2E }) else {
                return false
            }
            let rest = host[host.index(after: close)...]
            return rest.isEmpty || isPort(rest)
        }
        if let colon = host.lastIndex(of: UInt8(ascii: ":")) {
            guard isPort(host[colon...]) else { return false }
            host = host[..<colon]
        }
        return !host.isEmpty && host.allSatisfy { hostBytes[Int($0)] }
    }

    /// `:` and digits.
    private static func isPort<Bytes: Collection>(_ text: Bytes) -> Bool where Bytes.Element == UInt8 {
        text.first == UInt8(ascii: ":") && text.dropFirst().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }

    /// Runs `body` with the first `capacity` header fields in the order received (in memory on
    /// the stack: this runs for every request) and how many there are in all.
    static func withFields(
        of connection: OpaquePointer, atMost capacity: Int, _ body: (UnsafeBufferPointer<Field>, Int) -> Problem?
    ) -> Problem? {
        return withUnsafeTemporaryAllocation(of: Field.self, capacity: capacity) { buffer in
            var gathered = Gathered(buffer: buffer)
            _ = withUnsafeMutablePointer(to: &gathered) { pointer in
                MHD_get_connection_values_n(
                    connection, .HEADER_KIND,
                    { cls, _, key, keySize, value, valueSize in
                        guard let cls, let key else { return .YES }
                        let gathered = cls.assumingMemoryBound(to: Gathered.self)
                        let index = gathered.pointee.count
                        gathered.pointee.count += 1
                        guard index < gathered.pointee.buffer.count else { return .YES }
                        gathered.pointee.buffer.initializeElement(
                            at: index,
                            to: Field(
                                name: key, nameCount: keySize, value: value ?? key + keySize,
                                valueCount: value == nil ? 0 : valueSize))
                        return .YES
                    }, pointer)
            }
            let stored = min(gathered.count, capacity)
            return body(UnsafeBufferPointer(rebasing: buffer[..<stored]), gathered.count)
        }
    }

    /// Header fields gathered into a buffer by libmicrohttpd's iteration.
    private struct Gathered {
        var buffer: UnsafeMutableBufferPointer<Field>
        var count = 0
    }

    /// The header fields, in the order received.
    static func fields(of connection: OpaquePointer) -> [Field] {
        var fields: [Field] = []
        fields.reserveCapacity(16)
        _ = withUnsafeMutablePointer(to: &fields) { pointer in
            MHD_get_connection_values_n(
                connection, .HEADER_KIND,
                { cls, _, key, keySize, value, valueSize in
                    guard let cls, let key else { return .YES }
                    let fields = cls.assumingMemoryBound(to: [Field].self)
                    // A field without a value has one of length 0 libmicrohttpd points at "".
                    fields.pointee.append(
                        Field(
                            name: key, nameCount: keySize, value: value ?? key + keySize,
                            valueCount: value == nil ? 0 : valueSize))
                    return .YES
                }, pointer)
        }
        return fields
    }

    private static func name(_ field: Field) -> String {
        let bytes = UnsafeRawBufferPointer(start: field.name, count: min(field.nameCount, 64))
        return "'" + String(decoding: bytes.map { isTokenByte($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self) + "'"
    }

    /// A field's value without the spaces and tabs around it, as bytes in place.
    private static func trimmed(_ field: Field) -> Slice<UnsafeRawBufferPointer> {
        let bytes = UnsafeRawBufferPointer(start: field.value, count: field.valueCount)
        let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
        let end = bytes.lastIndex { $0 != 0x20 && $0 != 0x09 }.map { $0 + 1 } ?? start
        return bytes[start..<max(start, end)]
    }

    private static func matches(_ field: Field, _ name: String) -> Bool {
        matches(field.name, field.nameCount, name)
    }

    /// Whether `count` bytes at `text` are `expected`, ASCII letters in either case.
    private static func matches(_ text: UnsafePointer<CChar>, _ count: Int, _ expected: String) -> Bool {
        count == expected.utf8.count && strncasecmp(text, expected, count) == 0
    }
}

/// The request's target as received, measured by the URI log callback before libmicrohttpd
/// unescapes it in place.
struct RawTarget: Sendable {
    /// Its length: up to a NUL byte received in it, if any.
    var count: Int
    /// What is wrong with it: a control character or space, an escaped NUL (`%00`), which would
    /// cut short the unescaped path and query libmicrohttpd hands over, or more query arguments
    /// than the server takes.
    var problem: Problem?

    /// The most query arguments a target may have. libmicrohttpd 0.9.75 indexes each in the
    /// connection's memory, and when they do not fit it neither answers nor closes (the request
    /// waits for the request timeout).
    static let maximumArguments = 100

    /// An empty target.
    init() {
        count = 0
        problem = nil
    }

    /// Measures `text` (a NUL-terminated C string).
    init(_ text: UnsafePointer<CChar>) {
        var count = 0
        var problem: Problem?
        var query: Int?
        var arguments = 0
        while text[count] != 0 {
            let byte = UInt8(bitPattern: text[count])
            if byte <= 0x20 || byte == 0x7F {
                problem = problem ?? .badRequest("The request's target holds a space or a control character.")
            } else if byte == 0x25, text[count + 1] == 0x30, text[count + 2] == 0x30 {
                problem = problem ?? .badRequest("The request's path or one of its parameters holds a NUL byte (%00).")
            } else if byte == 0x3F, query == nil {
                query = count
                arguments = 1
            } else if byte == 0x26, query != nil {
                arguments += 1
            }
            count += 1
        }
        self.count = count
        if arguments > Self.maximumArguments {
            problem = Problem(
                status: 414, title: "URI Too Long",
                detail: "The request's target has \(arguments) query arguments; this server takes at most "
                    + "\(Self.maximumArguments).")
        }
        self.problem = problem
    }

    /// Whether the query has more arguments than libmicrohttpd should be asked to index.
    var hasTooManyArguments: Bool { problem?.status == 414 }
}
