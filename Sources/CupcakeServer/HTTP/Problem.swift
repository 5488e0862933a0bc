import CupcakeDomain
import CupcakeJSON

/// An RFC 9457 problem detail, sent as `application/problem+json`.
public struct Problem: Error, Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// A short, human title; the same for every occurrence of this kind of problem.
    public var title: String
    /// What went wrong this time.
    public var detail: String
    /// A URI naming the kind of problem; `about:blank` means "see the status".
    public var type: String = "about:blank"
    /// For 422: each bad field by wire key, and its rule.
    public var errors: [(field: String, rule: String)] = []
    /// Extension members (RFC 9457 §3.2), after the standard ones: a 409's `code` and the
    /// statuses allowed next.
    public var extensions: [JSONValue.Member] = []
    /// Extra response headers (such as `Allow`).
    public var headers: [(name: String, value: String)] = []

    public static func == (lhs: Problem, rhs: Problem) -> Bool {
        lhs.status == rhs.status && lhs.title == rhs.title && lhs.detail == rhs.detail
    }

    /// The response carrying this problem.
    public var response: HTTPResponse {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("type")
        writer.string(type)
        writer.key("title")
        writer.string(title)
        writer.key("status")
        writer.integer(status)
        writer.key("detail")
        writer.string(detail)
        if !errors.isEmpty {
            writer.key("errors")
            writer.beginArray()
            for error in errors {
                writer.beginObject()
                writer.key("field")
                writer.string(error.field)
                writer.key("rule")
                writer.string(error.rule)
                writer.endObject()
            }
            writer.endArray()
        }
        for member in extensions {
            writer.key(member.key)
            let text = member.value.text()
            writer.value { $0 += text.utf8 }
        }
        writer.endObject()
        return HTTPResponse(
            status: status, headers: [("Content-Type", "application/problem+json")] + headers, body: writer.bytes)
    }

    static func badRequest(_ detail: String) -> Problem {
        Problem(status: 400, title: "Bad Request", detail: detail)
    }

    /// A 401 carries a challenge (RFC 9110 §11.6.1), here naming the header the key goes in.
    static func unauthorized() -> Problem {
        Problem(
            status: 401, title: "Unauthorized", detail: "Missing or wrong API key: send it in the x-api-key header.",
            headers: [("WWW-Authenticate", #"ApiKey header="x-api-key""#)])
    }

    static func forbidden(_ detail: String) -> Problem {
        Problem(status: 403, title: "Forbidden", detail: detail)
    }

    /// 429 with `Retry-After` in whole seconds (at least 1).
    static func tooManyRequests(_ detail: String, retryAfter seconds: Double) -> Problem {
        Problem(
            status: 429, title: "Too Many Requests", detail: detail,
            headers: [("Retry-After", String(max(1, Int(seconds.rounded(.up)))))])
    }

    static func notFound(_ detail: String) -> Problem {
        Problem(status: 404, title: "Not Found", detail: detail)
    }

    static func methodNotAllowed(_ method: String, allowed: [String]) -> Problem {
        Problem(
            status: 405, title: "Method Not Allowed",
            detail: "\(method) is not allowed here; allowed: \(allowed.joined(separator: ", ")).",
            headers: [("Allow", allowed.joined(separator: ", "))])
    }

    static func conflict(_ detail: String) -> Problem {
        Problem(status: 409, title: "Conflict", detail: detail)
    }

    /// 412: the order changed since the caller read it (its `If-Match` no longer matches).
    static func preconditionFailed(_ detail: String) -> Problem {
        Problem(status: 412, title: "Precondition Failed", detail: detail)
    }

    static func payloadTooLarge(limit: Int) -> Problem {
        Problem(status: 413, title: "Content Too Large", detail: "The body is over the limit of \(limit) bytes.")
    }

    /// 431: the request's head is over a limit (or more than its connection can hold).
    static func headTooLarge(_ detail: String) -> Problem {
        Problem(status: 431, title: "Request Header Fields Too Large", detail: detail)
    }

    static func notImplemented(_ detail: String) -> Problem {
        Problem(status: 501, title: "Not Implemented", detail: detail)
    }

    static func versionNotSupported(_ detail: String) -> Problem {
        Problem(status: 505, title: "HTTP Version Not Supported", detail: detail)
    }

    static func unsupportedMediaType(_ contentType: String?) -> Problem {
        Problem(
            status: 415, title: "Unsupported Media Type",
            detail: contentType.map { "The body must be application/json, not \($0)." }
                ?? "The body must be sent with Content-Type: application/json.")
    }

    static func unsupportedEncoding(_ encoding: String) -> Problem {
        Problem(
            status: 415, title: "Unsupported Media Type",
            detail: "The body must not be encoded (Content-Encoding \(encoding)); send plain JSON.")
    }

    static func unprocessable(_ detail: String, errors: [(field: String, rule: String)] = []) -> Problem {
        Problem(status: 422, title: "Unprocessable Content", detail: detail, errors: errors)
    }

    static func internalError(requestID: String) -> Problem {
        Problem(
            status: 500, title: "Internal Server Error",
            detail: "Something went wrong on our side; the request id is \(requestID).")
    }

    static func unavailable(_ detail: String, retryAfterSeconds: Int = 1) -> Problem {
        Problem(
            status: 503, title: "Service Unavailable", detail: detail,
            headers: [("Retry-After", String(retryAfterSeconds))])
    }

    /// Storage that may work again (a full or failing disk, a database file moved away): the
    /// cause is in the server's log, never in the answer.
    static func storageUnavailable() -> Problem {
        unavailable(
            "The server cannot store orders right now. Retry later: a retry with the same Idempotency-Key never "
                + "places the order twice.",
            retryAfterSeconds: 5)
    }
}
