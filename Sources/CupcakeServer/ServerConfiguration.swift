import CupcakeJSON
import CupcakeStorage
import Foundation

/// Everything `cupcake serve` can be told; defaults are those in Config/server.json.
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to bind.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (the startup line says which).
    public var port = 8080
    /// The SQLite file, or a PostgreSQL URL; `nil` means `$XDG_DATA_HOME/cupcake/orders.sqlite`.
    public var database: String?
    /// PostgreSQL connections per instance; 0 means one per worker and two more.
    public var databasePoolSize = 0
    /// The app's key (`x-api-key`): place orders, and reach one order with its receipt token.
    public var apiKey: String?
    /// The shop's key (`x-api-key`): everything.
    public var staffKey: String?
    /// Serve without keys on an address other than loopback, answering any `Host`.
    public var insecureNoKeys = false
    /// Web origins whose pages may call the API (CORS), e.g. `https://shop.example`.
    public var corsOrigins: [String] = []
    /// Proxies (addresses) whose `X-Forwarded-For` names the client.
    public var trustedProxies: [String] = []
    /// Most connections at once from one client address.
    public var connectionsPerClient = 64
    /// POSTs per second per client address, sustained; 0 is no limit.
    public var postsPerSecondPerClient = 0.0
    /// POSTs a client address may make at once before the rate applies.
    public var postBurstPerClient = 20
    /// Wrong or missing keys per minute from one client address before it gets 429.
    public var failedKeysPerMinute = 20
    /// Largest body accepted, in bytes.
    public var bodyLimitBytes = 64 * 1024
    /// Most connections at once.
    public var connectionLimit = 1024
    /// Seconds an idle or stalled connection is kept.
    public var idleTimeoutSeconds = 15
    /// Seconds a request may take to arrive in full (headers and body), however steadily.
    public var requestTimeoutSeconds = 30
    /// Worker threads; 0 means one per core.
    public var threads = 0
    /// Whether to pin each worker to a core of its own and the commit thread beside the first;
    /// only done with one worker per core, on two cores or more.
    public var pinThreads = true
    /// How hard a commit tries to reach the disk.
    public var durability = Durability.full
    /// Whether to log one line per request.
    public var accessLog = true
    /// How often an idle event stream gets a comment (under the idle timeout, and under what
    /// proxies allow: nginx's `proxy_read_timeout` is 60 s).
    public var eventHeartbeatSeconds = 10.0
    /// How webhooks are delivered (see ``WebhookSettings``).
    public var webhooks = WebhookSettings()

    /// The defaults.
    public init() {}

    /// The keys a server config file may hold.
    static let keys: Set<String> = [
        "host", "port", "database", "databasePoolSize", "apiKey", "staffKey", "insecureNoKeys", "corsOrigins",
        "trustedProxies",
        "connectionsPerClient", "postsPerSecondPerClient", "postBurstPerClient", "failedKeysPerMinute",
        "bodyLimitBytes", "connectionLimit", "idleTimeoutSeconds", "requestTimeoutSeconds", "threads", "pinThreads",
        "durability", "accessLog", "eventHeartbeatSeconds", "webhookAllowPrivateAddresses", "webhookRetryScale",
        "webhookDisableAfterSeconds", "webhookTimeoutSeconds", "webhookConnectTimeoutSeconds", "webhookWorkers",
        "webhookHistoryDays",
    ]

    /// Who may do what, from these settings.
    public var access: AccessPolicy {
        var policy = AccessPolicy()
        policy.appKey = apiKey
        policy.staffKey = staffKey
        policy.insecureNoKeys = insecureNoKeys
        policy.corsOrigins = corsOrigins
        policy.trustedProxies = trustedProxies
        policy.postsPerSecondPerClient = postsPerSecondPerClient
        policy.postBurstPerClient = postBurstPerClient
        policy.failedKeysPerMinute = failedKeysPerMinute
        return policy
    }

    /// Why these settings must not be served (listening beyond loopback with no key), or nil.
    public var refusal: String? {
        guard apiKey == nil, staffKey == nil, !insecureNoKeys, !ClientAddress.isLoopbackListen(host) else {
            return nil
        }
        return
            "Listening on \(host) without keys would let anyone who can reach it read and cancel every order. "
            + "Set --api-key-file and --staff-key-file (or CUPCAKE_API_KEY and CUPCAKE_STAFF_KEY, or apiKey and staffKey in the config file), or pass "
            + "--insecure-no-keys to serve it open on purpose."
    }

    /// Applies a config file's JSON object over these values.
    ///
    /// - Throws: a message naming the key and the problem (unknown key, wrong type, bad value).
    public mutating func apply(fileContents data: Data) throws(ConfigurationError) {
        let object: JSONValue
        do throws(JSONSyntaxError) {
            object = try JSONValue.parse(data)
        } catch {
            throw ConfigurationError("is not valid JSON (\(error))")
        }
        guard let members = object.members else { throw ConfigurationError("must be a JSON object") }
        for member in members where !Self.keys.contains(member.key) && !member.key.hasPrefix("$") {
            throw ConfigurationError(
                "has an unknown key '\(member.key)' (known: \(Self.keys.sorted().joined(separator: ", ")))")
        }
        /// The key's value, nil when absent or null.
        func value(_ key: String) -> JSONValue? {
            guard let value = object[key], value != .null else { return nil }
            return value
        }
        func string(_ key: String) throws(ConfigurationError) -> String? {
            guard let value = value(key) else { return nil }
            guard let text = value.string else { throw ConfigurationError("'\(key)' must be a string") }
            return text
        }
        func integer(_ key: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
            guard let value = value(key) else { return nil }
            guard let number = value.wholeNumber, range.contains(number) else {
                throw ConfigurationError("'\(key)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        if let host = try string("host") { self.host = host }
        if let port = try integer("port", 0...65535) { self.port = port }
        if let database = try string("database") { self.database = database }
        if let size = try integer("databasePoolSize", 0...1000) { databasePoolSize = size }
        if let apiKey = try string("apiKey") { self.apiKey = apiKey.isEmpty ? nil : apiKey }
        if let staffKey = try string("staffKey") { self.staffKey = staffKey.isEmpty ? nil : staffKey }
        func strings(_ key: String) throws(ConfigurationError) -> [String]? {
            guard let value = value(key) else { return nil }
            guard let list = value.elements, case let texts = list.compactMap(\.string), texts.count == list.count
            else {
                throw ConfigurationError("'\(key)' must be an array of strings")
            }
            return texts
        }
        if let origins = try strings("corsOrigins") {
            for origin in origins where !Self.isOrigin(origin) {
                throw ConfigurationError(
                    "'corsOrigins' holds '\(origin)', which is not an origin such as https://shop.example")
            }
            corsOrigins = origins
        }
        if let proxies = try strings("trustedProxies") {
            for proxy in proxies where !ClientAddress.isAddress(proxy) {
                throw ConfigurationError("'trustedProxies' holds '\(proxy)', which is not an IP address")
            }
            trustedProxies = proxies
        }
        if let limit = try integer("connectionsPerClient", 1...100_000) { connectionsPerClient = limit }
        if let burst = try integer("postBurstPerClient", 1...100_000) { postBurstPerClient = burst }
        if let limit = try integer("failedKeysPerMinute", 1...100_000) { failedKeysPerMinute = limit }
        if let value = value("postsPerSecondPerClient") {
            guard let number = value.number, number >= 0, number <= 100_000 else {
                throw ConfigurationError("'postsPerSecondPerClient' must be a number in 0...100000 (0: no limit)")
            }
            postsPerSecondPerClient = number
        }
        if let limit = try integer("bodyLimitBytes", 1...(64 * 1024 * 1024)) { bodyLimitBytes = limit }
        if let limit = try integer("connectionLimit", 1...100_000) { connectionLimit = limit }
        if let seconds = try integer("idleTimeoutSeconds", 1...3600) { idleTimeoutSeconds = seconds }
        if let seconds = try integer("requestTimeoutSeconds", 1...3600) { requestTimeoutSeconds = seconds }
        if let threads = try integer("threads", 0...256) { self.threads = threads }
        if let text = try string("durability") {
            guard let durability = Durability(rawValue: text) else {
                throw ConfigurationError(
                    "'durability' must be one of \(Durability.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.durability = durability
        }
        func boolean(_ key: String) throws(ConfigurationError) -> Bool? {
            guard let value = value(key) else { return nil }
            guard case .bool(let flag) = value else { throw ConfigurationError("'\(key)' must be true or false") }
            return flag
        }
        if let pin = try boolean("pinThreads") { pinThreads = pin }
        if let open = try boolean("insecureNoKeys") { insecureNoKeys = open }
        if let log = try boolean("accessLog") { accessLog = log }
        func number(_ key: String, _ range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
            guard let value = value(key) else { return nil }
            guard let number = value.number, range.contains(number) else {
                throw ConfigurationError("'\(key)' must be a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        if let seconds = try number("eventHeartbeatSeconds", 0.01...3600) { eventHeartbeatSeconds = seconds }
        if let allow = try boolean("webhookAllowPrivateAddresses") { webhooks.allowPrivateAddresses = allow }
        if let scale = try number("webhookRetryScale", 0.000_001...1) { webhooks.retryScale = scale }
        if let seconds = try integer("webhookDisableAfterSeconds", 1...31_536_000) {
            webhooks.disableAfterSeconds = seconds
        }
        if let seconds = try integer("webhookTimeoutSeconds", 1...300) { webhooks.timeoutSeconds = seconds }
        if let seconds = try integer("webhookConnectTimeoutSeconds", 1...300) {
            webhooks.connectTimeoutSeconds = seconds
        }
        if let workers = try integer("webhookWorkers", 1...64) { webhooks.workers = workers }
        if let days = try integer("webhookHistoryDays", 1...3650) { webhooks.historyDays = days }
    }

    /// Whether `text` is a web origin: scheme, host and optional port, nothing else.
    static func isOrigin(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty,
            components.path.isEmpty, components.query == nil, components.fragment == nil, components.user == nil
        else { return false }
        return true
    }

    /// The database path, resolving the XDG default with `variable` (an environment variable's
    /// value by name).
    public func databasePath(environment variable: (String) -> String?) -> String {
        if let database, !database.isEmpty { return database }
        let base: String
        if let data = variable("XDG_DATA_HOME"), !data.isEmpty {
            base = data
        } else {
            base = (variable("HOME") ?? NSHomeDirectory()) + "/.local/share"
        }
        return base + "/cupcake/orders.sqlite"
    }
}

/// A problem with a configuration file, phrased to follow its path: "… config.json has …".
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
