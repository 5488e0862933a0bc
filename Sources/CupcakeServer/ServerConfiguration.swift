import CupcakeStorage
import Foundation

/// Everything `cupcake serve` can be told; defaults are those in Config/server.json.
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to bind.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (the startup line says which).
    public var port = 8080
    /// The SQLite file; `nil` means `$XDG_DATA_HOME/cupcake/orders.sqlite`.
    public var database: String?
    /// When set, /api requests need it in `x-api-key`.
    public var apiKey: String?
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
    public var durability = Durability.process
    /// Whether to log one line per request.
    public var accessLog = true

    /// The defaults.
    public init() {}

    /// The keys a server config file may hold.
    static let keys: Set<String> = [
        "host", "port", "database", "apiKey", "bodyLimitBytes", "connectionLimit", "idleTimeoutSeconds",
        "requestTimeoutSeconds", "threads", "pinThreads", "durability", "accessLog",
    ]

    /// Applies a config file's JSON object over these values.
    ///
    /// - Throws: a message naming the key and the problem (unknown key, wrong type, bad value).
    public mutating func apply(fileContents data: Data) throws(ConfigurationError) {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError(
                "is not valid JSON (\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error))")
        }
        guard let object = parsed as? [String: Any] else { throw ConfigurationError("must be a JSON object") }
        for key in object.keys where !Self.keys.contains(key) && !key.hasPrefix("$") {
            throw ConfigurationError(
                "has an unknown key '\(key)' (known: \(Self.keys.sorted().joined(separator: ", ")))")
        }
        func string(_ key: String) throws(ConfigurationError) -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw ConfigurationError("'\(key)' must be a string") }
            return text
        }
        func integer(_ key: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let number = value as? NSNumber, String(cString: number.objCType) != "c",
                number.doubleValue == Double(number.intValue),
                range.contains(number.intValue)
            else {
                throw ConfigurationError("'\(key)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return number.intValue
        }
        if let host = try string("host") { self.host = host }
        if let port = try integer("port", 0...65535) { self.port = port }
        if let database = try string("database") { self.database = database }
        if let apiKey = try string("apiKey") { self.apiKey = apiKey.isEmpty ? nil : apiKey }
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
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let number = value as? NSNumber, String(cString: number.objCType) == "c" else {
                throw ConfigurationError("'\(key)' must be true or false")
            }
            return number.boolValue
        }
        if let pin = try boolean("pinThreads") { pinThreads = pin }
        if let log = try boolean("accessLog") { accessLog = log }
    }

    /// The database path, resolving the XDG default.
    public func databasePath(environment: [String: String]) -> String {
        if let database, !database.isEmpty { return database }
        let base: String
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            base = data
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
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
