import CCurl
import FoundationEssentials
import Glibc
import Synchronization

/// One libcurl easy handle, reused for every request a client makes (so the pages of `orders
/// list` go over one connection), one request at a time. `init` makes it, `deinit` frees it.
final class CurlExchange: @unchecked Sendable {
    // Safe: `handle` is used only while holding `lock`, by one request at a time.
    private let lock = Mutex(())
    /// The handle, made on the first request (so that libcurl is loaded only when a request is).
    private var handle: UnsafeMutableRawPointer?

    init() {}

    deinit {
        if let handle, case .success(let api) = CurlLibrary.shared.api { cupcake_curl_easy_cleanup(api, handle) }
    }

    /// What an exchange brought back.
    struct Reply {
        var status: Int
        /// The final answer's header lines in order, names in lowercase. (A list, not a
        /// dictionary: hashing strings would cost a one-shot command the Swift runtime's first
        /// lookup of `String: Hashable`, for the one or two headers it reads.)
        var headers: [(name: String, value: String)]
        var body: Data

        /// The value of the last header named `name` (in lowercase), if there is one.
        func header(_ name: String) -> String? { headers.last { $0.name == name }?.value }
    }

    /// Why an exchange failed: libcurl's code and message, and whether the answer was cut off
    /// at the size limit.
    struct Failure: Error {
        var code: CURLcode
        var message: String
        var tooLarge: Bool
    }

    /// Sends `request` and waits for the whole answer, on the calling thread.
    ///
    /// - Parameters:
    ///   - timeout: the deadline for the whole exchange, in seconds.
    ///   - limit: the most body bytes accepted; a longer answer fails (`tooLarge`).
    ///   - destination: where a 2xx body goes instead of memory (an open descriptor).
    ///   - caFile: certificates to trust instead of the system's.
    func perform(
        _ request: OutgoingRequest, timeout: Double, limit: Int, destination: Int32?, caFile: String?
    ) -> Result<Reply, Failure> {
        lock.withLock { _ in
            performLocked(request, timeout: timeout, limit: limit, destination: destination, caFile: caFile)
        }
    }

    /// Sends `request` and hands a 2xx body to `onData` as it arrives, until the server ends it,
    /// `onData` returns false, or nothing (not even a heartbeat) came for `idleSeconds`; on the
    /// calling thread. `timeout` bounds connecting only.
    func stream(
        _ request: OutgoingRequest, timeout: Double, idleSeconds: Int, caFile: String?,
        onData: @escaping (UnsafeRawBufferPointer) -> Bool
    ) -> Result<Reply, Failure> {
        lock.withLock { _ in
            performLocked(
                request, timeout: timeout, limit: 64 << 10, destination: nil, caFile: caFile, onData: onData,
                idleSeconds: idleSeconds)
        }
    }

    /// Sends `request` from the server to a receiver it does not control (a webhook delivery):
    /// connecting takes at most `connectTimeout`, the whole exchange `timeout`; no proxy from
    /// the environment; and every address libcurl is about to connect to, after resolving the
    /// name, goes through `addresses` first (see ``AddressRule``).
    func deliver(
        _ request: OutgoingRequest, connectTimeout: Double, timeout: Double, addresses: AddressGuard
    ) -> Result<Reply, Failure> {
        lock.withLock { _ in
            performLocked(
                request, timeout: timeout, limit: 64 << 10, destination: nil, caFile: nil,
                delivery: (connectTimeout, addresses))
        }
    }

    private func performLocked(
        _ request: OutgoingRequest, timeout: Double, limit: Int, destination: Int32?, caFile: String?,
        onData: ((UnsafeRawBufferPointer) -> Bool)? = nil, idleSeconds: Int? = nil,
        delivery: (connectTimeout: Double, addresses: AddressGuard)? = nil
    ) -> Result<Reply, Failure> {
        let api: UnsafePointer<cupcake_curl>
        switch CurlLibrary.shared.api {
        case .success(let loaded): api = loaded
        case .failure(let error):
            return .failure(Failure(code: CURLE_FAILED_INIT, message: error.message, tooLarge: false))
        }
        if handle == nil { handle = cupcake_curl_easy_init(api) }
        guard let handle else {
            return .failure(Failure(code: CURLE_FAILED_INIT, message: "no handle", tooLarge: false))
        }
        // Reset the options, keep the connection cache and the TLS session.
        cupcake_curl_easy_reset(api, handle)
        let sink = Sink(limit: limit, destination: destination)
        sink.onData = onData
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var list: UnsafeMutablePointer<curl_slist>?
        for header in request.headers {
            list = cupcake_curl_slist_append(api, list, "\(header.name): \(header.value)")
        }
        // No "Expect: 100-continue" pause before the body.
        list = cupcake_curl_slist_append(api, list, "Expect:")
        defer { cupcake_curl_slist_free_all(api, list) }
        let context = Unmanaged.passUnretained(sink).toOpaque()
        let code: CURLcode = request.url.absoluteString.withCString { url in
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                _ = cupcake_curl_set_string(api, handle, CURLOPT_URL, url)
                // Only http and https, even where a redirect would lead (none is followed).
                _ = cupcake_curl_set_string(api, handle, CURLOPT_PROTOCOLS_STR, "http,https")
                _ = cupcake_curl_set_long(api, handle, CURLOPT_FOLLOWLOCATION, 0)
                _ = cupcake_curl_set_long(api, handle, CURLOPT_NOSIGNAL, 1)
                if let idleSeconds {
                    // A stream has no end to wait for: connecting is bounded, then silence.
                    _ = cupcake_curl_set_long(api, handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(timeout * 1000)))
                    _ = cupcake_curl_set_long(api, handle, CURLOPT_LOW_SPEED_LIMIT, 1)
                    _ = cupcake_curl_set_long(api, handle, CURLOPT_LOW_SPEED_TIME, idleSeconds)
                } else {
                    _ = cupcake_curl_set_long(api, handle, CURLOPT_TIMEOUT_MS, max(1, Int(timeout * 1000)))
                }
                _ = cupcake_curl_set_pointer(api, handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list))
                _ = cupcake_curl_set_pointer(api, handle, CURLOPT_ERRORBUFFER, errors.baseAddress)
                _ = cupcake_curl_set_callback(api, handle, CURLOPT_WRITEFUNCTION, Self.write)
                _ = cupcake_curl_set_pointer(api, handle, CURLOPT_WRITEDATA, context)
                _ = cupcake_curl_set_callback(api, handle, CURLOPT_HEADERFUNCTION, Self.header)
                _ = cupcake_curl_set_pointer(api, handle, CURLOPT_HEADERDATA, context)
                if let caFile { _ = cupcake_curl_set_string(api, handle, CURLOPT_CAINFO, caFile) }
                if let delivery {
                    _ = cupcake_curl_set_long(
                        api, handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(delivery.connectTimeout * 1000)))
                    _ = cupcake_curl_set_string(api, handle, CURLOPT_NOPROXY, "*")
                    _ = cupcake_curl_set_opensocket(api, handle, AddressGuard.openSocket)
                    _ = cupcake_curl_set_pointer(
                        api, handle, CURLOPT_OPENSOCKETDATA, Unmanaged.passUnretained(delivery.addresses).toOpaque())
                }
                switch request.method {
                case "GET": _ = cupcake_curl_set_long(api, handle, CURLOPT_HTTPGET, 1)
                case "HEAD": _ = cupcake_curl_set_long(api, handle, CURLOPT_NOBODY, 1)
                default:
                    _ = request.method.withCString { cupcake_curl_set_string(api, handle, CURLOPT_CUSTOMREQUEST, $0) }
                }
                if let body = request.body {
                    _ = cupcake_curl_set_size(api, handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
                    // Copied by libcurl before the call returns.
                    _ = body.withUnsafeBytes {
                        cupcake_curl_set_pointer(
                            api, handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
                    }
                }
                return cupcake_curl_easy_perform(api, handle)
            }
        }
        if sink.stoppedByReader {
            return .success(
                Reply(status: cupcake_curl_response_code(api, handle), headers: sink.headers, body: sink.body))
        }
        guard code == CURLE_OK else {
            let text = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let message = text.isEmpty ? String(cString: cupcake_curl_easy_strerror(api, code)) : text
            return .failure(Failure(code: code, message: message, tooLarge: sink.tooLarge))
        }
        return .success(Reply(status: cupcake_curl_response_code(api, handle), headers: sink.headers, body: sink.body))
    }

    /// Where an answer's bytes go while libcurl reads them.
    private final class Sink {
        let limit: Int
        let destination: Int32?
        var status = 0
        var headers: [(name: String, value: String)] = []
        var body = Data()
        var written = 0
        var tooLarge = false
        var writeFailed = false
        /// A stream's reader, for a 2xx body.
        var onData: ((UnsafeRawBufferPointer) -> Bool)?
        /// Whether the reader ended the transfer.
        var stoppedByReader = false

        init(limit: Int, destination: Int32?) {
            self.limit = limit
            self.destination = destination
        }
    }

    /// libcurl's write callback: the body, into memory up to the limit, or (a 2xx body with a
    /// destination) into the file. Returning less than given stops the transfer.
    private static let write: cupcake_curl_data_callback = { data, size, count, context in
        guard let data, let context else { return 0 }
        let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
        let bytes = size * count
        if let onData = sink.onData, (200...299).contains(sink.status) {
            guard onData(UnsafeRawBufferPointer(start: data, count: bytes)) else {
                sink.stoppedByReader = true
                return 0
            }
            return bytes
        }
        if let destination = sink.destination, (200...299).contains(sink.status) {
            var offset = 0
            while offset < bytes {
                let step = Glibc.write(destination, data + offset, bytes - offset)
                guard step > 0 else {
                    sink.writeFailed = true
                    return 0
                }
                offset += step
            }
            sink.written += bytes
            return bytes
        }
        guard sink.body.count + bytes <= sink.limit else {
            sink.tooLarge = true
            return 0
        }
        sink.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: bytes)
        return bytes
    }

    /// libcurl's header callback: one header line at a time; a status line starts a new answer
    /// (after an interim 1xx).
    private static let header: cupcake_curl_data_callback = { data, size, count, context in
        guard let data, let context else { return 0 }
        let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
        let bytes = size * count
        // Read as plain bytes, in loops the compiler specializes: Foundation's trimming went
        // through NSString, and the generic slicing and splitting it was replaced with cost the
        // Swift runtime a type lookup each on the first answer (docs/PERFORMANCE.md, section 2).
        let raw = UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: bytes)
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        var start = 0
        var end = raw.count
        while start < end, blank(raw[start]) { start += 1 }
        while end > start, blank(raw[end - 1]) { end -= 1 }
        guard start < end else { return bytes }
        let line = UnsafeBufferPointer(rebasing: raw[start..<end])
        if line.count >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {
            // "HTTP/1.1 201 Created": the three digits after the first space.
            var index = 0
            while index < line.count, line[index] != 0x20 { index += 1 }
            while index < line.count, line[index] == 0x20 { index += 1 }
            var status = 0
            var digits = 0
            while index < line.count, digits < 3, line[index] >= 0x30, line[index] <= 0x39 {
                status = status * 10 + Int(line[index] - 0x30)
                index += 1
                digits += 1
            }
            sink.status = digits == 3 ? status : 0
            sink.headers = []
        } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            var value = colon + 1
            while value < line.count, blank(line[value]) { value += 1 }
            let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
            sink.headers.append(
                (name.lowercased(), String(decoding: UnsafeBufferPointer(rebasing: line[value...]), as: UTF8.self)))
        }
        return bytes
    }
}
