import CMicroHTTPD
import Foundation

/// One request's state across libmicrohttpd's calls: the body so far, and the answer once it is
/// known. Owned by MHD's per-request pointer from the first call until "request completed".
final class RequestContext: @unchecked Sendable {
    // Safe: MHD calls the access handler for one request on one thread at a time; `response`,
    // `suspended` and `answered` may also be touched by the thread that answers later, and those
    // are guarded by `lock`. An answer given while suspended is stored here, the connection
    // resumed, and MHD calls the access handler again, which queues it.
    let method: String
    let path: String
    let startNanoseconds: UInt64
    let requestID: String
    /// Who sent it (see ``HTTPRequest/clientAddress``); set on the first call.
    var client = ""
    var body: [UInt8] = []
    /// A response was queued early (413); later upload data is discarded.
    var rejected = false
    /// The body passed the limit while arriving; the rest is dropped and 413 answered at the end.
    var overLimit = false
    var discardedBytes = 0
    var status = 0
    let lock = NSLock()
    var response: HTTPResponse?
    var suspended = false
    var answered = false
    /// Handed to the handler, which answers later; MHD calls again on the worker's next pass.
    var awaiting = false

    init(method: String, path: String, requestID: String) {
        self.method = method
        self.path = path
        self.requestID = requestID
        startNanoseconds = DispatchTime.now().uptimeNanoseconds
    }
}

/// Queues `response` on the connection, adding `Request-Id`. Returns MHD's verdict.
@discardableResult
func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: RequestContext) -> MHD_Result {
    context.status = response.status
    let mhdResponse: OpaquePointer?
    if let file = response.file {
        // libmicrohttpd owns the descriptor from here (it closes it with the response).
        guard let descriptor = file.take() else { return .NO }
        mhdResponse = MHD_create_response_from_fd64(UInt64(file.size), descriptor)
        if mhdResponse == nil { close(descriptor) }
    } else {
        let body = response.body
        mhdResponse = body.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
        }
    }
    guard let mhdResponse else { return .NO }
    // withCString, not the implicit String-to-pointer conversion, which copies into a new array.
    context.requestID.withCString { _ = MHD_add_response_header(mhdResponse, "Request-Id", $0) }
    for header in response.headers {
        header.name.withCString { name in
            header.value.withCString { _ = MHD_add_response_header(mhdResponse, name, $0) }
        }
    }
    let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
    MHD_destroy_response(mhdResponse)
    return result
}

/// MHD's access handler: called once when headers arrive, once per piece of body, and once at
/// the end, when the request is handed to the server's handler.
let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, uploadData, uploadSize, requestState in
    guard let cls, let connection, let requestState, let uploadSize else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()

    // First call: headers only.
    guard let state = requestState.pointee else {
        let context = RequestContext(
            method: method.map { String(cString: $0) } ?? "GET",
            path: url.map { String(cString: $0) } ?? "/",
            requestID: server.log.nextRequestID())
        server.activeRequests.add(1, ordering: .relaxed)
        requestState.pointee = Unmanaged.passRetained(context).toOpaque()
        context.client = server.clientAddress(of: connection)
        let needsHost = version.map { strcmp($0, "HTTP/1.1") == 0 } ?? false
        if server.escapedNULs.take(connection) {
            context.rejected = true
            return queue(
                Problem.badRequest("The request's path or one of its parameters holds a NUL byte (%00).").response,
                on: connection, context: context)
        }
        if let problem = framingProblem(connection, needsHost: needsHost) {
            // The body's end (or the request's target) is ambiguous, so nothing after these
            // headers can be trusted to start a new request: answer and close.
            context.rejected = true
            var response = Problem.badRequest(problem).response
            response.headers.append((name: "Connection", value: "close"))
            return queue(response, on: connection, context: context)
        }
        if let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
            let bytes = Int(String(cString: length)), bytes > server.limits.bodyBytes
        {
            context.rejected = true
            return queue(
                Problem.payloadTooLarge(limit: server.limits.bodyBytes).response, on: connection, context: context)
        }
        return .YES
    }
    let context = Unmanaged<RequestContext>.fromOpaque(state).takeUnretainedValue()

    // Body pieces.
    if uploadSize.pointee > 0 {
        let count = uploadSize.pointee
        uploadSize.pointee = 0
        if context.overLimit {
            // MHD accepts a response only once the upload has been read, so the rest of an
            // over-limit body (one without Content-Length) is read and dropped, never stored; a
            // flood far past the limit is cut off by closing the connection.
            context.discardedBytes += count
            return context.discardedBytes > 16 * server.limits.bodyBytes ? .NO : .YES
        }
        if context.rejected { return .YES }
        if context.body.count + count > server.limits.bodyBytes {
            context.overLimit = true
            context.discardedBytes = context.body.count + count
            context.body = []
            return .YES
        }
        if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: count) { pointer in
                context.body.append(contentsOf: UnsafeBufferPointer(start: pointer, count: count))
            }
        }
        return .YES
    }

    // The end of the request (or a call after a resume, when the answer is already queued).
    // Received in full: the request deadline stops until it has been answered.
    watchedConnection(connection)?.receivingSince.store(0, ordering: .relaxed)
    if context.rejected { return .YES }
    if context.overLimit {
        context.rejected = true
        return queue(Problem.payloadTooLarge(limit: server.limits.bodyBytes).response, on: connection, context: context)
    }
    context.lock.lock()
    if context.awaiting, !context.suspended, context.response == nil {
        // The next pass and still no answer: suspend until it comes.
        context.suspended = true
        MHD_suspend_connection(connection)
        context.lock.unlock()
        return .YES
    }
    if context.suspended || context.awaiting {
        // Called again after a resume: queue the answer here, on the worker thread, so the
        // thread that answered (the group-commit writer) only hands it over.
        let response = context.response
        context.response = nil
        context.lock.unlock()
        guard let response else { return .YES }
        return queue(response, on: connection, context: context)
    }
    let alreadyStarted = context.answered
    context.lock.unlock()
    if alreadyStarted { return .YES }

    let headers = server.wantedHeaders(of: connection)
    let request = HTTPRequest(
        method: context.method, path: context.path,
        query: MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, nil, nil) > 0
            ? values(of: connection, kind: .GET_ARGUMENT_KIND) : [:],
        headers: headers, body: context.body, requestID: context.requestID, clientAddress: context.client)
    context.body = []
    let handle = UnsafeSendable(connection)
    server.handler.handle(request) { response in
        context.lock.lock()
        guard !context.answered else {
            context.lock.unlock()
            return
        }
        context.answered = true
        context.response = response
        let resume = context.suspended
        context.lock.unlock()
        // Resumed after unlocking: the resume wakes the worker, which takes this lock first
        // thing. MHD calls nothing for a suspended connection until it is resumed, so nothing
        // can happen to the request in between.
        if resume {
            MHD_resume_connection(handle.value)
        }
    }
    context.lock.lock()
    defer { context.lock.unlock() }
    if let response = context.response {
        context.response = nil
        return queue(response, on: connection, context: context)
    }
    // Neither answered nor suspended: MHD calls again on the worker's next pass, after its other
    // ready connections. An answer in by then costs no suspend and resume.
    context.awaiting = true
    return .YES
}

/// MHD's "request completed": logs the request and frees its context.
let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, requestState, termination in
    // The connection is ready for its next request, whose deadline starts now.
    if let connection {
        watchedConnection(connection)?.receivingSince.store(ConnectionWatch.now(), ordering: .relaxed)
    }
    guard let cls, let requestState, let state = requestState.pointee else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(state).takeRetainedValue()
    requestState.pointee = nil
    let elapsed = DispatchTime.now().uptimeNanoseconds - context.startNanoseconds
    server.metrics.request(
        method: context.method, path: context.path, status: context.status, seconds: Double(elapsed) / 1e9)
    server.log.request(
        method: context.method, path: context.path, status: context.status, nanoseconds: elapsed,
        requestID: context.requestID, client: context.client,
        aborted: termination != .REQUEST_TERMINATED_COMPLETED_OK)
    server.activeRequests.subtract(1, ordering: .releasing)
}

/// What is wrong with a request's message framing (RFC 9112 §6) or its Host (§3.2), or nil.
///
/// libmicrohttpd 0.9.75 takes the first of several Content-Length headers and lets
/// Transfer-Encoding win over Content-Length while keeping the connection open, so in both cases
/// the bytes after the body it read are served as the next request: a proxy in front that framed
/// the message the other way would have a request smuggled past it. The RFC's answer is a 400
/// and a closed connection; the same for a Transfer-Encoding that does not end in chunked, and
/// for an HTTP/1.1 request without exactly one Host (which libmicrohttpd accepts by default).
func framingProblem(_ connection: OpaquePointer, needsHost: Bool) -> String? {
    struct Framing {
        /// The first Content-Length value, held as libmicrohttpd's pointer (no copy per request).
        var length: UnsafePointer<CChar>?
        var lengthsDisagree = false
        var encodings: [String] = []
        var hosts = 0
    }
    var framing = Framing()
    _ = withUnsafeMutablePointer(to: &framing) { pointer in
        MHD_get_connection_values(
            connection, .HEADER_KIND,
            { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let framing = cls.assumingMemoryBound(to: Framing.self)
                if strcasecmp(key, "Content-Length") == 0, let value {
                    if let first = framing.pointee.length {
                        let trim = { (text: UnsafePointer<CChar>) in
                            String(cString: text).trimmingOptionalWhitespace
                        }
                        if trim(first) != trim(value) { framing.pointee.lengthsDisagree = true }
                    } else {
                        framing.pointee.length = value
                    }
                } else if strcasecmp(key, "Host") == 0 {
                    framing.pointee.hosts += 1
                } else if strcasecmp(key, "Transfer-Encoding") == 0 {
                    framing.pointee.encodings.append(value.map { String(cString: $0) } ?? "")
                }
                return .YES
            }, pointer)
    }
    if !framing.encodings.isEmpty {
        if framing.length != nil {
            return "The request has both Transfer-Encoding and Content-Length."
        }
        let codings = framing.encodings.joined(separator: ",").split(separator: ",")
        let last = codings.last.map { $0.trimmingOptionalWhitespace.lowercased() }
        if last != "chunked" {
            return "The request's Transfer-Encoding does not end in chunked."
        }
    }
    if framing.lengthsDisagree {
        return "The request has Content-Length headers that disagree."
    }
    if framing.hosts > 1 || (needsHost && framing.hosts == 0) {
        return "An HTTP/1.1 request needs exactly one Host header."
    }
    return nil
}

extension HTTPServer {
    /// The request headers the handler reads (``headerNames``), with lower-cased names, in one
    /// pass over the request's headers (the first of a repeated one, as a lookup gives).
    func wantedHeaders(of connection: OpaquePointer) -> [String: String] {
        final class Box {
            let names: [String]
            let cNames: [[CChar]]
            var found: [String: String] = [:]
            init(names: [String], cNames: [[CChar]]) {
                self.names = names
                self.cNames = cNames
            }
        }
        let box = Box(names: headerNames, cNames: headerCNames)
        _ = MHD_get_connection_values(
            connection, .HEADER_KIND,
            { cls, _, key, value in
                guard let cls, let key, let value else { return .YES }
                let box = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue()
                for index in box.cNames.indices
                where box.cNames[index].withUnsafeBufferPointer({
                    $0.baseAddress.map { strcasecmp(key, $0) == 0 } ?? false
                }) {
                    let name = box.names[index]
                    if box.found[name] == nil { box.found[name] = String(cString: value) }
                    break
                }
                return .YES
            }, Unmanaged.passUnretained(box).toOpaque())
        return box.found
    }
}

/// The connection's peer address as text ("" when unknown).
func peerAddress(of connection: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    guard cupcake_connection_client_address(connection, &buffer, socklen_t(buffer.count)) == 1 else { return "" }
    return String(cString: buffer)
}

/// Collects a connection's query arguments (or other values of a kind) into a dictionary.
private func values(of connection: OpaquePointer, kind: MHD_ValueKind) -> [String: String] {
    final class Box {
        var values: [String: String] = [:]
    }
    let box = Box()
    let unmanaged = Unmanaged.passUnretained(box)
    _ = MHD_get_connection_values(
        connection, kind,
        { cls, _, key, value in
            guard let cls, let key else { return .YES }
            let box = Unmanaged<Box>.fromOpaque(cls).takeUnretainedValue()
            let name = String(cString: key)
            box.values[name] = value.map { String(cString: $0) } ?? ""
            return .YES
        }, unmanaged.toOpaque())
    return box.values
}

/// Carries a C pointer into a `@Sendable` closure; MHD allows using the connection from another
/// thread while it is suspended, which is the only time the closure does.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
