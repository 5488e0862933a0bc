import CupcakeDomain
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What happens while a request is out, for a progress display.
public enum TransportEvent: Sendable {
    /// Attempt `number` of `total` is starting.
    case attempt(number: Int, total: Int)
    /// Waiting `seconds` before the next attempt, after `reason`.
    case waiting(seconds: Double, reason: String)
}

/// One long-lived URLSession (libcurl underneath on Linux) with what every cupcake request
/// needs: the standard headers, a deadline of our own on each attempt (URLSession on Linux
/// truncates its timeouts to whole seconds), and retries with backoff on connection failures,
/// timeouts, 409, 429 and 5xx, never on other 4xx.
final class Transport: Sendable {
    let session: URLSession
    let configuration: CheckoutConfiguration

    init(configuration: CheckoutConfiguration) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        // A backstop only: the real deadline is our own, in `attempt`.
        sessionConfiguration.timeoutIntervalForRequest = configuration.timeoutSeconds.rounded(.up) + 1
        session = URLSession(configuration: sessionConfiguration)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// A request to `url` with the standard and configured headers.
    func request(_ method: String, _ url: URL, body: Data? = nil) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if body != nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("cupcake/\(Cupcake.version)", forHTTPHeaderField: "User-Agent")
        for (name, value) in configuration.headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        if let apiKey = configuration.apiKey {
            request.setValue(apiKey, forHTTPHeaderField: "x-api-key")
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
    /// - Parameter destination: when set, a 2xx body is written into this existing file
    ///   (replacing what it holds) instead of being kept in memory, and the answer's `data` is
    ///   empty.
    func send(
        _ request: URLRequest, passing: Set<Int> = [], destination: URL? = nil,
        events: @Sendable (TransportEvent) -> Void
    ) async throws(CheckoutError) -> Answer {
        let policy = RetryPolicy(retries: configuration.retries)
        let total = policy.retries + 1
        var lastFailure = CheckoutError(.temporary, "")
        for number in 1...total {
            events(.attempt(number: number, total: total))
            let retryAfter: String?
            switch await attempt(request, destination: destination) {
            case .answer(let status, let data, let headers):
                if (200...299).contains(status) || passing.contains(status) {
                    return Answer(status: status, data: data, attempt: number)
                }
                let failure = Self.failure(status: status, data: data)
                guard RetryPolicy.isRetryable(status: status) else { throw failure }
                lastFailure = failure
                retryAfter = headers["retry-after"]
            case .failed(let failure):
                lastFailure = failure
                retryAfter = nil
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
        case answer(status: Int, data: Data, headers: [String: String])
        case failed(CheckoutError)
    }

    /// One request with our own deadline.
    private func attempt(_ request: URLRequest, destination: URL?) async -> Outcome {
        let endpoint = request.url?.absoluteString ?? configuration.endpoint.absoluteString
        let timeout = configuration.timeoutSeconds
        let timedOut = Flag()
        return await withCheckedContinuation { continuation in
            let finish: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
                if let error {
                    continuation.resume(
                        returning: .failed(
                            Self.failure(error, endpoint: endpoint, timedOut: timedOut.isSet, timeout: timeout)))
                    return
                }
                guard let http = response as? HTTPURLResponse else {
                    continuation.resume(
                        returning: .failed(CheckoutError(.protocolError, "\(endpoint) did not answer with HTTP.")))
                    return
                }
                var headers: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                }
                continuation.resume(returning: .answer(status: http.statusCode, data: data ?? Data(), headers: headers))
            }
            let task: URLSessionTask
            if let destination {
                task = session.downloadTask(with: request) { location, response, error in
                    // The temporary file is deleted when this returns: take its bytes now.
                    guard error == nil, let location else { return finish(nil, response, error) }
                    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                    guard (200...299).contains(status) else {
                        // An error answer is small: read it for its message.
                        return finish(try? Data(contentsOf: location), response, nil)
                    }
                    if let failure = Self.copy(location, into: destination) {
                        return continuation.resume(returning: .failed(failure))
                    }
                    finish(Data(), response, nil)
                }
            } else {
                task = session.dataTask(with: request) { data, response, error in finish(data, response, error) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak task] in
                guard let task, task.state == .running else { return }
                timedOut.set()
                task.cancel()
            }
            task.resume()
        }
    }

    /// Copies the file at `source` over the contents of the existing file `destination`, keeping
    /// the destination's mode (the caller created it private); nil, or why it failed.
    static func copy(_ source: URL, into destination: URL) -> CheckoutError? {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            return CheckoutError(.temporary, "Cannot read the downloaded file: \(String(cString: strerror(errno)))")
        }
        defer { close(input) }
        let output = open(destination.path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard output >= 0 else {
            return CheckoutError(
                .configuration, "Cannot write \(destination.path): \(String(cString: strerror(errno)))")
        }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return nil }
            guard count > 0 else {
                return CheckoutError(.temporary, "Cannot read the downloaded file: \(String(cString: strerror(errno)))")
            }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { write(output, $0 + written, count - written) } ?? -1
                }
                guard step > 0 else {
                    return CheckoutError(
                        .configuration, "Cannot write \(destination.path): \(String(cString: strerror(errno)))")
                }
                written += step
            }
        }
    }

    /// A transport error as a checkout failure.
    static func failure(_ error: any Error, endpoint: String, timedOut: Bool, timeout: Double) -> CheckoutError {
        let seconds = timeout == timeout.rounded() ? String(Int(timeout)) : String(timeout)
        if timedOut {
            return CheckoutError(.temporary, "\(endpoint) did not answer within \(seconds) s")
        }
        let code = (error as? URLError)?.code
        switch code {
        case .cannotConnectToHost?:
            return CheckoutError(.unreachable, "Cannot reach \(endpoint): connection refused")
        case .cannotFindHost?, .dnsLookupFailed?:
            return CheckoutError(.unreachable, "Cannot reach \(endpoint): unknown host")
        case .notConnectedToInternet?:
            return CheckoutError(.unreachable, "Cannot reach \(endpoint): no network")
        case .timedOut?:
            return CheckoutError(.temporary, "\(endpoint) did not answer within \(seconds) s")
        case .networkConnectionLost?, .badServerResponse?, .zeroByteResource?, .cannotParseResponse?:
            return CheckoutError(.temporary, "The connection to \(endpoint) broke before the answer was complete")
        case .secureConnectionFailed?, .serverCertificateUntrusted?, .serverCertificateHasBadDate?,
            .serverCertificateNotYetValid?, .serverCertificateHasUnknownRoot?:
            return CheckoutError(.unreachable, "Cannot reach \(endpoint): the TLS handshake failed")
        default:
            return CheckoutError(.temporary, "The request to \(endpoint) failed (\((error as NSError).code))")
        }
    }

    /// A non-2xx answer as a checkout failure, quoting the server's own message.
    static func failure(status: Int, data: Data) -> CheckoutError {
        let message = serverMessage(data) ?? HTTPURLResponse.localizedString(forStatusCode: status)
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
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            let text = String(decoding: data.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty || text.contains("<") ? nil : text
        }
        var parts: [String] = []
        if let detail = object["detail"] as? String { parts.append(detail) }
        if let errors = object["errors"] as? [[String: Any]] {
            let fields = errors.compactMap { entry -> String? in
                guard let field = entry["field"] as? String else { return nil }
                return "\(field) \(entry["rule"] as? String ?? "is invalid")"
            }
            if !fields.isEmpty { parts.append(fields.joined(separator: "; ")) }
        }
        if parts.isEmpty, let error = object["error"] as? String { parts.append(error) }
        if parts.isEmpty, let message = object["message"] as? String { parts.append(message) }
        if parts.isEmpty, let title = object["title"] as? String { parts.append(title) }
        return parts.isEmpty ? nil : parts.joined(separator: " — ")
    }
}

/// A flag set once from one thread and read from another.
private final class Flag: @unchecked Sendable {
    // Safe: `value` is only touched while holding `lock`.
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
