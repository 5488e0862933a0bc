import CMicroHTTPD
import Foundation

/// libmicrohttpd's URI log callback: called once the request line is read, before any header
/// field, with the target as received. Its answer becomes the request's context pointer, so the
/// context (and the request's clock) starts here, and every request libmicrohttpd goes on to
/// refuse by itself (a head too large for the connection's memory, say) is still logged.
///
/// A target with more query arguments than ``RawTarget/maximumArguments`` has its query emptied
/// here, in libmicrohttpd's buffer, before libmicrohttpd splits it: libmicrohttpd 0.9.75 stalls
/// on arguments it cannot index, and the handler refuses the request (414) without reading them.
let uriLogged:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
        cls, uri, connection in
        guard let cls else { return nil }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        let target = uri.map(RawTarget.init) ?? RawTarget()
        if target.hasTooManyArguments, let uri, let question = strchr(uri, 0x3F) {
            // The target lies in libmicrohttpd's own (writable) buffer, which it parses next.
            UnsafeMutablePointer(mutating: question + 1).pointee = 0
        }
        let context = RequestContext(requestID: server.log.nextRequestID(), rawTarget: target)
        // The peer for now (the head, and any X-Forwarded-For in it, is not read yet): what the log
        // shows for a request libmicrohttpd refuses before the handler is called.
        if let connection { context.client = watchedConnection(connection)?.address ?? peerAddress(of: connection) }
        server.activeRequests.add(1, ordering: .relaxed)
        return Unmanaged.passRetained(context).toOpaque()
    }

/// Queues `response` on the connection, adding `Request-Id`. Returns MHD's verdict.
@discardableResult
func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: RequestContext) -> MHD_Result {
    context.status = response.status
    let mhdResponse: OpaquePointer?
    if let stream = response.stream {
        mhdResponse = stream.makeResponse(for: connection)
    } else if let file = response.file {
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

/// MHD's access handler: called once when the head has arrived, once per piece of body, and
/// once at the end, when the request is handed to the server's handler.
let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, url, method, version, uploadData, uploadSize, requestState in
    guard let cls, let connection, let requestState, let state = requestState.pointee, let uploadSize else {
        return .NO
    }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(state).takeUnretainedValue()

    switch context.progress.withLock({ $0 }) {
    case .arriving:
        return admit(context, connection, server: server, url: url, method: method, version: version)
    case .receiving where uploadSize.pointee > 0:
        let count = uploadSize.pointee
        uploadSize.pointee = 0
        if context.body.count + count > server.limits.bodyBytes {
            // MHD accepts a response only once the upload has been read, so the rest of an
            // over-limit body (one without Content-Length) is read and dropped, never stored.
            context.progress.withLock { $0 = .discarding(bytes: context.body.count + count) }
            context.body = []
        } else if let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: count) { pointer in
                context.body.append(contentsOf: UnsafeBufferPointer(start: pointer, count: count))
            }
        }
        return .YES
    case .discarding(let bytes) where uploadSize.pointee > 0:
        let total = bytes + uploadSize.pointee
        uploadSize.pointee = 0
        context.progress.withLock { $0 = .discarding(bytes: total) }
        // A flood far past the limit is cut off by closing the connection.
        return total > 16 * server.limits.bodyBytes ? .NO : .YES
    case .refused, .sentDirectly, .answeredByLibrary:
        uploadSize.pointee = 0
        return .YES
    case .receiving:
        // The end of the request: received in full, so its deadline stops until it is answered.
        watchedConnection(connection)?.receivingSince.store(0, ordering: .relaxed)
        return hand(context, connection, server: server)
    case .discarding:
        context.progress.withLock { $0 = .refused }
        return queue(Problem.payloadTooLarge(limit: server.limits.bodyBytes).response, on: connection, context: context)
    case .handed, .awaiting, .suspended, .answered, .queued:
        return answerIfReady(context, connection)
    }
}

/// The first call: the head has arrived. Refuses it (answered, connection closed) or admits it.
private func admit(
    _ context: RequestContext, _ connection: OpaquePointer, server: HTTPServer, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?
) -> MHD_Result {
    context.method = method.map { String(cString: $0) } ?? "-"
    context.path = url.map { String(cString: $0) } ?? "-"
    context.client = server.clientAddress(of: connection)
    // libmicrohttpd answered this request itself while reading its head (a Content-Length it
    // cannot read, say); nothing else may happen to it.
    let queued = cupcake_connection_queued_status(connection)
    if queued != 0 {
        context.status = Int(queued)
        context.progress.withLock { $0 = .answeredByLibrary }
        return .YES
    }
    guard let method, let url, let version else { return .NO }
    let limits = server.headLimits
    if let problem = RequestHead.refusal(
        of: connection, method: method, url: url, version: version, rawTarget: context.rawTarget, limits: limits)
    {
        var response = problem.response
        response.headers.append((name: "Connection", value: "close"))
        let kept = RequestHead.keptBytes(
            connection, headBytes: cupcake_connection_head_size(connection),
            fields: RequestHead.fields(of: connection).count)
        if kept + DirectAnswer.reserveBytes > HTTPServer.connectionMemoryBytes {
            // No room left to build the answer in (see DirectAnswer): write it, and close.
            context.status = response.status
            let sent = DirectAnswer.send(response, requestID: context.requestID, on: connection)
            context.progress.withLock { $0 = sent ? .sentDirectly : .refused }
            return .NO
        }
        context.progress.withLock { $0 = .refused }
        return queue(response, on: connection, context: context)
    }
    context.progress.withLock { $0 = .receiving }
    return .YES
}

/// The last call: hands the request to the handler, and queues its answer if it came at once.
private func hand(_ context: RequestContext, _ connection: OpaquePointer, server: HTTPServer) -> MHD_Result {
    let headers = server.wantedHeaders(of: connection)
    let request = HTTPRequest(
        method: context.method, path: context.path,
        query: MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, nil, nil) > 0
            ? values(of: connection, kind: .GET_ARGUMENT_KIND) : [:],
        headers: headers, body: context.body, requestID: context.requestID, clientAddress: context.client)
    context.body = []
    context.progress.withLock { $0 = .handed }
    let handle = UnsafeSendable(connection)
    server.handler.handle(request) { response in
        let resume = context.progress.withLock { progress -> Bool? in
            switch progress {
            case .handed, .awaiting:
                progress = .answered(response)
                return false
            case .suspended:
                progress = .answered(response)
                return true
            default:
                // Answered already: the handler answers once.
                return nil
            }
        }
        // Resumed after unlocking: the resume wakes the worker, which takes this lock first
        // thing. MHD calls nothing for a suspended connection until it is resumed, so nothing
        // can happen to the request in between.
        if resume == true { MHD_resume_connection(handle.value) }
    }
    return answerIfReady(context, connection)
}

/// Queues the handler's answer if it has come; otherwise waits for it: first until the worker's
/// next pass (an answer in by then costs no suspend and resume), then suspended.
private func answerIfReady(_ context: RequestContext, _ connection: OpaquePointer) -> MHD_Result {
    let answer = context.progress.withLock { progress -> HTTPResponse? in
        switch progress {
        case .answered(let response):
            progress = .queued
            return response
        case .handed:
            // Not answered while the handler ran: MHD calls again on the worker's next pass,
            // after its other ready connections.
            progress = .awaiting
        case .awaiting:
            // The next pass and still no answer: suspend until it comes. Under the lock, so the
            // answer cannot try to resume the connection before it is suspended.
            progress = .suspended
            MHD_suspend_connection(connection)
        default:
            break
        }
        return nil
    }
    // Queued here, on the worker thread, so the thread that answered (the group-commit writer)
    // only hands it over.
    guard let answer else { return .YES }
    return queue(answer, on: connection, context: context)
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
    // Answered by libmicrohttpd itself (its own 400, 413 or 431 while reading the head): it
    // reports every such request as ended "with error", answer sent or not, so it is logged with
    // that answer's status as it is for any other.
    var answeredByLibrary = false
    switch context.progress.withLock({ $0 }) {
    case .arriving:
        context.status = connection.map { Int(cupcake_connection_queued_status($0)) } ?? 0
        answeredByLibrary = context.status != 0
    case .answeredByLibrary:
        answeredByLibrary = true
    default:
        break
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - context.startNanoseconds
    // Only a request whose answer was sent in full completes OK; any other had its answer (if it
    // had one) cut off, and is logged and counted as aborted with the status it would have had.
    let sentDirectly = if case .sentDirectly = context.progress.withLock({ $0 }) { true } else { false }
    let aborted = termination != .REQUEST_TERMINATED_COMPLETED_OK && !sentDirectly && !answeredByLibrary
    server.metrics.request(
        method: context.method, path: context.path, status: context.status, seconds: Double(elapsed) / 1e9,
        aborted: aborted)
    server.log.request(
        method: context.method, path: context.path, status: context.status, nanoseconds: elapsed,
        requestID: context.requestID, client: context.client, aborted: aborted)
    server.activeRequests.subtract(1, ordering: .releasing)
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
