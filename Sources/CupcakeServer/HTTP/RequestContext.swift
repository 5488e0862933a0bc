import CMicroHTTPD
import Foundation
import Synchronization

/// One request's state across libmicrohttpd's calls, from the moment its request line is read
/// (the URI log callback makes it) until "request completed" frees it.
final class RequestContext: @unchecked Sendable {
    // Safe: libmicrohttpd calls the access handler for one request on one worker thread at a
    // time; only `progress` is also touched by the thread that answers later (the group-commit
    // writer), and it is a Mutex.
    let startNanoseconds: UInt64
    let requestID: String
    /// The target as received, measured before libmicrohttpd unescaped it.
    let rawTarget: RawTarget
    /// The method and path, once the access handler has been called ("-" and the raw target's
    /// length otherwise: a request libmicrohttpd refused while reading its head).
    var method = "-"
    var path = "-"
    /// Who sent it (see ``HTTPRequest/clientAddress``); set on the first call.
    var client = ""
    /// The status of the answer queued, 0 before one is.
    var status = 0
    var body: [UInt8] = []
    /// Where the request is.
    let progress = Mutex(RequestProgress.arriving)

    init(requestID: String, rawTarget: RawTarget) {
        self.requestID = requestID
        self.rawTarget = rawTarget
        startNanoseconds = DispatchTime.now().uptimeNanoseconds
    }
}

/// Where a request is between libmicrohttpd's calls and the handler's answer.
enum RequestProgress {
    /// Its head is being read; the access handler has not been called yet.
    case arriving
    /// Admitted: its body (if any) is arriving.
    case receiving
    /// Its body passed the limit: the rest is read and dropped, then 413 answered.
    case discarding(bytes: Int)
    /// Answered before it was handed on (a refused head, 413); what still arrives is ignored.
    case refused
    /// Answered by libmicrohttpd itself while it read the head (a Content-Length it cannot
    /// read, say); never handed on.
    case answeredByLibrary
    /// Refused by an answer written straight to the socket (``DirectAnswer``): libmicrohttpd
    /// closes the connection.
    case sentDirectly
    /// With the handler, which is still running on this worker.
    case handed
    /// With the handler, which has not answered yet; libmicrohttpd calls again on the worker's
    /// next pass.
    case awaiting
    /// With the handler, the connection suspended until the answer comes.
    case suspended
    /// The handler answered; the answer waits to be queued on the worker thread.
    case answered(HTTPResponse)
    /// The answer is queued (or the handler answered twice: the second is dropped).
    case queued
}
