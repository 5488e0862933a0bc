import CupcakeDomain
import CupcakeJSON
import FoundationEssentials

/// Where and how `cupcake order` sends orders.
///
/// Precedence, highest first: flags; the environment (`CUPCAKE_ENDPOINT`, `CUPCAKE_API_KEY`,
/// `CUPCAKE_CONFIG`); a config file (`--config`, else `CUPCAKE_CONFIG`, else
/// `$XDG_CONFIG_HOME/cupcake/config.json` if it exists); the built-in defaults, which equal the
/// committed Config/cupcake.json.
public struct CheckoutConfiguration: Sendable, Equatable {
    /// The order endpoint.
    public var endpoint = CheckoutConfiguration.defaultEndpoint
    /// The app's key, sent as `x-api-key` when placing an order.
    public var apiKey: String?
    /// The shop's key, sent as `x-api-key` to list and change orders and make backups; the app
    /// key stands in when it is not set.
    public var staffKey: String?
    /// A file of CA certificates to trust instead of the system's (for a shop's own HTTPS).
    public var caFile: String?
    /// The deadline for each attempt, in seconds (fractions allowed).
    public var timeoutSeconds: Double = 10
    /// How many times to retry after the first attempt.
    public var retries = 2
    /// Extra request headers.
    public var headers: [String: String] = [:]

    /// The defaults.
    public init() {}

    /// `http://127.0.0.1:8080/api/cupcakes`: the embedded `cupcake serve` on its default port.
    public static let defaultEndpoint: URL = {
        guard let url = URL(string: "http://127.0.0.1:8080/api/cupcakes") else {
            preconditionFailure("the default endpoint is a constant, valid URL")
        }
        return url
    }()

    /// An endpoint as it may be shown: without `user:password@`.
    public static func display(_ url: URL) -> String { Transport.display(url) }

    /// The keys a config file may hold.
    static let keys = ["endpoint", "apiKey", "staffKey", "caFile", "timeoutSeconds", "retries", "headers"]

    /// Applies a config file's JSON over these values.
    ///
    /// - Throws: ``CheckoutError`` (configuration) naming the file and the problem.
    public mutating func apply(file path: String) throws(CheckoutError) {
        let data: Data
        do {
            data = try PrivateFiles.read(path)
        } catch {
            throw CheckoutError(.configuration, "Cannot read config file \(path): \(error.reason).")
        }
        do {
            try apply(json: data)
        } catch {
            throw CheckoutError(.configuration, "Config file \(path) \(error.message).")
        }
    }

    mutating func apply(json data: Data) throws(CheckoutError) {
        let parsed: JSONValue
        do throws(JSONSyntaxError) {
            parsed = try JSONValue.parse(data)
        } catch {
            throw CheckoutError(.configuration, "is not valid JSON (\(error))")
        }
        guard let members = parsed.members else {
            throw CheckoutError(.configuration, "must be a JSON object")
        }
        for member in members where !Self.keys.contains(member.key) && !member.key.hasPrefix("$") {
            throw CheckoutError(
                .configuration, "has an unknown key '\(member.key)' (known: \(Self.keys.joined(separator: ", ")))")
        }
        if let value = parsed["endpoint"] {
            guard let text = value.string else {
                throw CheckoutError(.configuration, "'endpoint' must be a string")
            }
            endpoint = try Self.endpoint(text, source: "'endpoint'")
        }
        if let value = parsed["apiKey"], value != .null {
            guard let text = value.string else { throw CheckoutError(.configuration, "'apiKey' must be a string") }
            apiKey = text.isEmpty ? nil : text
        }
        if let value = parsed["staffKey"], value != .null {
            guard let text = value.string else {
                throw CheckoutError(.configuration, "'staffKey' must be a string")
            }
            staffKey = text.isEmpty ? nil : text
        }
        if let value = parsed["caFile"], value != .null {
            guard let text = value.string, !text.isEmpty else {
                throw CheckoutError(.configuration, "'caFile' must be the path of a PEM file")
            }
            caFile = text
        }
        if let value = parsed["timeoutSeconds"] {
            guard let seconds = value.number, seconds > 0, seconds.isFinite else {
                throw CheckoutError(.configuration, "'timeoutSeconds' must be a positive number")
            }
            timeoutSeconds = seconds
        }
        if let value = parsed["retries"] {
            guard let count = value.wholeNumber, (0...10).contains(count) else {
                throw CheckoutError(.configuration, "'retries' must be a whole number in 0...10")
            }
            retries = count
        }
        if let value = parsed["headers"] {
            guard let table = value.members else {
                throw CheckoutError(.configuration, "'headers' must be an object of header names to strings")
            }
            for member in table {
                let name = member.key
                guard let text = member.value.string else {
                    throw CheckoutError(.configuration, "header '\(name)' must be a string")
                }
                guard Self.isToken(name), !text.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                    throw CheckoutError(.configuration, "header '\(name)' is not a valid HTTP header")
                }
                headers[name] = text
            }
        }
    }

    /// Resolves the whole configuration.
    ///
    /// - Parameters:
    ///   - flags: values from the command line (endpoint, api key, timeout, retries, config).
    ///   - environment: the process environment.
    ///   - userConfigDirectory: `$XDG_CONFIG_HOME/cupcake`.
    public static func resolve(
        flags: Flags, environment: Environment, userConfigDirectory: String
    ) throws(CheckoutError) -> CheckoutConfiguration {
        var configuration = CheckoutConfiguration()
        let file: String?
        if let path = flags.config ?? environment.nonEmpty("CUPCAKE_CONFIG") {
            file = path
        } else {
            let candidate = PrivateFiles.join(userConfigDirectory, "config.json")
            file = PrivateFiles.exists(candidate) ? candidate : nil
        }
        if let file { try configuration.apply(file: file) }
        if let endpoint = environment.nonEmpty("CUPCAKE_ENDPOINT") {
            configuration.endpoint = try Self.endpoint(endpoint, source: "CUPCAKE_ENDPOINT")
        }
        if let key = environment.nonEmpty("CUPCAKE_API_KEY") { configuration.apiKey = key }
        if let key = environment.nonEmpty("CUPCAKE_STAFF_KEY") { configuration.staffKey = key }
        if let endpoint = flags.endpoint { configuration.endpoint = try Self.endpoint(endpoint, source: "--endpoint") }
        if let key = flags.apiKey { configuration.apiKey = key.isEmpty ? nil : key }
        if let key = flags.staffKey { configuration.staffKey = key.isEmpty ? nil : key }
        if let timeout = flags.timeoutSeconds { configuration.timeoutSeconds = timeout }
        if let retries = flags.retries { configuration.retries = retries }
        return configuration
    }

    /// Settings given on the command line.
    public struct Flags: Sendable {
        /// `--endpoint`.
        public var endpoint: String?
        /// `--api-key`.
        public var apiKey: String?
        /// `--staff-key`.
        public var staffKey: String?
        /// `--timeout`.
        public var timeoutSeconds: Double?
        /// `--retries`.
        public var retries: Int?
        /// `--config`.
        public var config: String?
        /// The key flags given on the command line itself (`--api-key`), to warn about.
        public var keysOnCommandLine: [String] = []

        /// Creates flags.
        public init(
            endpoint: String? = nil, apiKey: String? = nil, timeoutSeconds: Double? = nil, retries: Int? = nil,
            config: String? = nil, staffKey: String? = nil
        ) {
            self.endpoint = endpoint
            self.apiKey = apiKey
            self.staffKey = staffKey
            self.timeoutSeconds = timeoutSeconds
            self.retries = retries
            self.config = config
        }
    }

    /// An http(s) URL with a host.
    static func endpoint(_ text: String, source: String) throws(CheckoutError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw CheckoutError(.configuration, "\(source) must be an http:// or https:// URL, not '\(text)'")
        }
        return url
    }

    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (0x21...0x7E).contains(byte) && !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
            }
    }
}
