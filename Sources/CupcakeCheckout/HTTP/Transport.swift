import CCurl
import CupcakeDomain
import CupcakeJSON
import Dispatch
import FoundationEssentials
import Glibc

/// What happens while a request is out, for a progress display.
public enum TransportEvent: Sendable {
    /// Attempt `number` of `total` is starting.
    case attempt(number: Int, total: Int)
    /// Waiting `seconds` before the next attempt, after `reason`.
    case waiting(seconds: Double, reason: String)
}

/// libcurl (one reused easy handle) with what every cupcake request needs: the standard headers,
/// a deadline on each attempt, retries with backoff on connection failures, timeouts, 409, 429
/// and 5xx, never on other 4xx.
///
/// What the client never does, whatever the server answers: follow a redirect (a 3xx is an
/// error naming its `Location`, so neither the key nor an order goes to another origin, and a
/// POST is never sent twice that way), read more than a size limit (1 MiB for an order, 16 MiB
/// for a list page), or print text from the server without escaping control characters.
final class Transport: Sendable {
    let configuration: CheckoutConfiguration
    private let exchange = CurlExchange()
    /// The key sent as `x-api-key`.
    private let key: String?

    /// The largest answer accepted for one order, and for one page of a list.
    static let orderLimit = 1 << 20
    static let listLimit = 16 << 20

    /// - Parameter staff: whether the requests are the shop's (listing, changing, backups),
    ///   which send the staff key (or the app key when there is none), or the app's (placing an
    ///   order), which send the app key (or the staff key when there is none).
    init(configuration: CheckoutConfiguration, staff: Bool = false) {
        self.configuration = configuration
        key = staff ? configuration.staffKey ?? configuration.apiKey : configuration.apiKey ?? configuration.staffKey
    }

    /// A request to `url` with the standard and configured headers.
    func request(_ method: String, _ url: URL, body: Data? = nil) -> OutgoingRequest {
        var request = OutgoingRequest(method: method, url: url, body: body)
        if body != nil { request.setHeader("Content-Type", "application/json") }
        request.setHeader("Accept", "application/json")
        request.setHeader("User-Agent", "cupcake/\(Cupcake.version)")
        for (name, value) in configuration.headers.sorted(by: { $0.key < $1.key }) {
            request.setHeader(name, value)
        }
        if let key {
            request.setHeader("x-api-key", key)
        }
        return request
    }

    /// An answer the caller handles itself.
    struct Answer {
        var status: Int
        var data: Data
        /// Which attempt it answered (1-based).
        var attempt: Int
    }

    /// Sends with retries; returns a 2xx answer or one whose status is in `passing`, and throws
    /// every other failure as a ``CheckoutError``.
    ///
    /// - Parameters:
    ///   - limit: the most body bytes accepted.
    ///   - destination: when set, a 2xx body is written into this existing file (replacing what
    ///     it holds) instead of being kept in memory, and the answer's `data` is empty.
    func send(
        _ request: OutgoingRequest, passing: Set<Int> = [], limit: Int = Transport.orderLimit,
        destination: URL? = nil, events: @Sendable (TransportEvent) -> Void
    ) async throws(CheckoutError) -> Answer {
        let policy = RetryPolicy(retries: configuration.retries)
        let total = policy.retries + 1
        var lastFailure = CheckoutError(.temporary, "")
        for number in 1...total {
            events(.attempt(number: number, total: total))
            let retryAfter: String?
            switch await attempt(request, limit: limit, destination: destination) {
            case .answer(let reply):
                let status = reply.status
                let data = reply.body
                if (200...299).contains(status) || passing.contains(status) {
                    return Answer(status: status, data: data, attempt: number)
                }
                if (300...399).contains(status) {
                    throw Self.redirected(status: status, location: reply.header("location"))
                }
                let failure = Self.failure(status: status, data: data)
                guard RetryPolicy.isRetryable(status: status) else { throw failure }
                lastFailure = failure
                retryAfter = reply.header("retry-after")
            case .failed(let failure):
                lastFailure = failure
                retryAfter = nil
            case .fatal(let failure):
                throw failure
            }
            guard number < total else { break }
            let wait = policy.delay(beforeRetry: number, retryAfter: retryAfter)
            events(.waiting(seconds: wait, reason: lastFailure.message))
            try? await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
        }
        let tries = total == 1 ? "1 try" : "\(total) tries"
        switch lastFailure.code {
        case .unreachable:
            throw CheckoutError(.unreachable, "\(lastFailure.message) (gave up after \(tries)).")
        default:
            throw CheckoutError(.temporary, "\(lastFailure.message) (gave up after \(tries)).")
        }
    }

    private enum Outcome {
        case answer(CurlExchange.Reply)
        /// Worth another attempt.
        case failed(CheckoutError)
        /// Not worth one (the answer was too large, the file could not be written).
        case fatal(CheckoutError)
    }

    /// One exchange within the configured deadline: on this thread when it is a
    /// ``CallingThreadExecutor``'s, else on a thread of its own (libcurl blocks).
    private func attempt(_ request: OutgoingRequest, limit: Int, destination: URL?) async -> Outcome {
        let endpoint = Self.display(request.url)
        let timeout = configuration.timeoutSeconds
        let caFile = configuration.caFile
        var descriptor: Int32?
        if let destination {
            let opened = open(destination.path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            guard opened >= 0 else {
                return .fatal(
                    CheckoutError(
                        .configuration, "Cannot write \(destination.path): \(String(cString: strerror(errno)))."))
            }
            descriptor = opened
        }
        defer { if let descriptor { close(descriptor) } }
        let fileDescriptor = descriptor
        let result: Result<CurlExchange.Reply, CurlExchange.Failure>
        if CallingThreadExecutor.isCurrentThread {
            // This thread runs this task and nothing else: wait for libcurl right here.
            result = exchange.perform(
                request, timeout: timeout, limit: limit, destination: fileDescriptor, caFile: caFile)
        } else {
            // Not on a thread of the runtime's pool, which must not block.
            result = await performOnAnotherThread(
                request, timeout: timeout, limit: limit, destination: fileDescriptor, caFile: caFile)
        }
        switch result {
        case .success(let reply):
            return .answer(reply)
        case .failure(let failure) where failure.tooLarge:
            return .fatal(
                CheckoutError(
                    .protocolError, "The answer from \(endpoint) is larger than \(limit >> 20) MiB; it was not read."))
        case .failure(let failure):
            let error = Self.failure(failure, endpoint: endpoint, timeout: timeout)
            return error.code == .configuration ? .fatal(error) : .failed(error)
        }
    }

    /// One streamed exchange (see ``CurlExchange/stream(_:timeout:idleSeconds:caFile:onData:)``):
    /// the answer's status and headers (and a body that was not 2xx), or why it broke.
    func stream(
        _ request: OutgoingRequest, idleSeconds: Int, onData: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool
    ) async -> Result<CurlExchange.Reply, CheckoutError> {
        let endpoint = Self.display(request.url)
        let timeout = configuration.timeoutSeconds
        let caFile = configuration.caFile
        let result = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { [exchange] in
                continuation.resume(
                    returning: exchange.stream(
                        request, timeout: timeout, idleSeconds: idleSeconds, caFile: caFile, onData: onData))
            }
        }
        switch result {
        case .success(let reply): return .success(reply)
        case .failure(let failure) where failure.code == CURLE_OPERATION_TIMEDOUT:
            return .failure(CheckoutError(.temporary, "\(endpoint) sent nothing for \(idleSeconds) s"))
        case .failure(let failure): return .failure(Self.failure(failure, endpoint: endpoint, timeout: timeout))
        }
    }

    /// One exchange on a thread of the global queue, awaited. A function of its own, so that
    /// a one-shot command (which never comes here) does not have the runtime make the
    /// continuation's types.
    @inline(never)
    private func performOnAnotherThread(
        _ request: OutgoingRequest, timeout: Double, limit: Int, destination: Int32?, caFile: String?
    ) async -> Result<CurlExchange.Reply, CurlExchange.Failure> {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { [exchange] in
                continuation.resume(
                    returning: exchange.perform(
                        request, timeout: timeout, limit: limit, destination: destination, caFile: caFile))
            }
        }
    }

    /// A URL as it may be shown: without `user:password@`.
    static func display(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.user != nil || components.password != nil
        else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }

    /// A libcurl failure as a checkout failure.
    static func failure(_ failure: CurlExchange.Failure, endpoint: String, timeout: Double) -> CheckoutError {
        let seconds = timeout == timeout.rounded() ? String(Int(timeout)) : String(timeout)
        switch failure.code {
        case CURLE_OPERATION_TIMEDOUT:
            return CheckoutError(.temporary, "\(endpoint) did not answer within \(seconds) s")
        case CURLE_COULDNT_CONNECT:
            return CheckoutError(.unreachable, "Cannot reach \(endpoint): connection refused")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return CheckoutError(.unreachable, "Cannot reach \(endpoint): unknown host")
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE:
            return CheckoutError(.temporary, "The connection to \(endpoint) broke before the answer was complete")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_CERTPROBLEM:
            return CheckoutError(
                .unreachable,
                "Cannot reach \(endpoint): the TLS handshake failed (\(TerminalText.escaped(failure.message)))")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return CheckoutError(.configuration, "Cannot send to \(endpoint): \(failure.message)")
        case CURLE_FAILED_INIT:
            // libcurl could not be loaded or could not make a handle: retrying would not help.
            return CheckoutError(.configuration, failure.message)
        case CURLE_WRITE_ERROR:
            return CheckoutError(.configuration, "Cannot write the answer from \(endpoint) to its file")
        default:
            return CheckoutError(
                .temporary, "The request to \(endpoint) failed (curl \(failure.code.rawValue): \(failure.message))")
        }
    }

    /// A 3xx: never followed.
    static func redirected(status: Int, location: String?) -> CheckoutError {
        let target = location.map { TerminalText.escaped($0) } ?? "nowhere"
        return CheckoutError(
            .protocolError,
            "The endpoint answered \(status), redirecting to \(target); cupcake does not follow redirects, so "
                + "nothing was sent there. Use that address as the endpoint if you trust it.")
    }

    static func failure(status: Int, data: Data) -> CheckoutError {
        let message = serverMessage(data) ?? "HTTP \(status)"
        switch status {
        case 401, 403:
            return CheckoutError(.unauthorized, "The endpoint refused the credentials (\(status)): \(message)")
        case 400, 422:
            return CheckoutError(.rejected, "The endpoint rejected the order (\(status)): \(message)")
        case 409:
            return CheckoutError(.temporary, "The endpoint is still handling this order (409): \(message)")
        case 429:
            return CheckoutError(.temporary, "The endpoint is rate limiting (429): \(message)")
        case 500...599:
            return CheckoutError(.temporary, "The endpoint failed (\(status)): \(message)")
        default:
            return CheckoutError(.protocolError, "The endpoint answered \(status): \(message)")
        }
    }

    /// The human part of an error body: problem+json's detail and errors, reqres's "error", or
    /// a "message"; `nil` when the body has none.
    static func serverMessage(_ data: Data) -> String? {
        guard let object = try? JSONValue.parse(data), object.members != nil else {
            let text = String(decoding: data.prefix(200), as: UTF8.self).trimmingWhitespace()
            return text.isEmpty || text.contains("<") ? nil : TerminalText.escaped(text)
        }
        var parts: [String] = []
        if let detail = object["detail"]?.string { parts.append(detail) }
        if let errors = object["errors"]?.elements {
            let fields = errors.compactMap { entry -> String? in
                guard let field = entry["field"]?.string else { return nil }
                return "\(field) \(entry["rule"]?.string ?? "is invalid")"
            }
            if !fields.isEmpty { parts.append(fields.joined(separator: "; ")) }
        }
        if parts.isEmpty, let error = object["error"]?.string { parts.append(error) }
        if parts.isEmpty, let message = object["message"]?.string { parts.append(message) }
        if parts.isEmpty, let title = object["title"]?.string { parts.append(title) }
        return parts.isEmpty ? nil : TerminalText.escaped(parts.joined(separator: " — "))
    }
}
