import FoundationEssentials
import Synchronization

/// POSTs webhook deliveries with libcurl, for the server: one connection cache, one delivery at
/// a time (a delivery thread owns one). Redirects are not followed; connecting and the whole
/// exchange are bounded; addresses are checked as ``AddressRule`` says at connect time.
public final class WebhookPoster: Sendable {
    /// What an attempt brought back.
    public struct Outcome: Sendable, Equatable {
        /// The HTTP status; 0 when no answer came.
        public var status: Int
        /// What went wrong, when no answer came or the address was refused.
        public var error: String?

        /// Creates one.
        public init(status: Int, error: String?) {
            self.status = status
            self.error = error
        }
    }

    private let exchange = CurlExchange()
    /// The last URL posted to, parsed (a thread posts to the same few endpoints over and over).
    private let lastURL = Mutex<(text: String, url: URL)?>(nil)
    private let allowPrivateAddresses: Bool
    private let connectTimeout: Double
    private let timeout: Double

    /// - Parameters:
    ///   - allowPrivateAddresses: whether loopback, private and link-local receivers are allowed.
    ///   - connectTimeout: seconds to connect (TLS included).
    ///   - timeout: seconds for the whole exchange.
    public init(allowPrivateAddresses: Bool, connectTimeout: Double, timeout: Double) {
        self.allowPrivateAddresses = allowPrivateAddresses
        self.connectTimeout = connectTimeout
        self.timeout = timeout
    }

    /// POSTs `body` (JSON) to `url` with `headers`, and waits for the answer.
    public func post(url: String, headers: [(name: String, value: String)], body: String) -> Outcome {
        let target = lastURL.withLock { last -> URL? in
            if let last, last.text == url { return last.url }
            let parsed = URL(string: url)
            last = parsed.map { (url, $0) }
            return parsed
        }
        guard let target, let scheme = target.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { return Outcome(status: 0, error: "not an http or https URL") }
        var request = OutgoingRequest(method: "POST", url: target, body: Data(body.utf8))
        request.setHeader("Content-Type", "application/json")
        request.setHeader("User-Agent", "cupcake-webhooks/1")
        for header in headers { request.setHeader(header.name, header.value) }
        let addresses = AddressGuard(allowPrivate: allowPrivateAddresses)
        switch exchange.deliver(request, connectTimeout: connectTimeout, timeout: timeout, addresses: addresses) {
        case .success(let reply): return Outcome(status: reply.status, error: nil)
        case .failure(let failure):
            if let refused = addresses.refused {
                return Outcome(status: 0, error: "refused: \(refused), which webhooks may not reach")
            }
            return Outcome(status: 0, error: failure.tooLarge ? "answer longer than 64 KiB" : failure.message)
        }
    }
}
