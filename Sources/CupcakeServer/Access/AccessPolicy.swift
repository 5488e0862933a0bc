/// Who may do what, and the limits that keep one client from crowding out the others.
///
/// Two keys, both sent in `x-api-key`: the **app key** ships inside every copy of the app, so
/// it is treated as public: it may place orders, and reach one order only with that order's
/// receipt token (`Order-Token`). The **staff key** may do everything. With neither, the server
/// answers only requests addressed to a loopback name (so a web page cannot reach it through
/// DNS rebinding), unless `insecureNoKeys` says otherwise.
public struct AccessPolicy: Sendable, Equatable {
    /// The app's key: place orders, and reach one's own order with its token.
    public var appKey: String?
    /// The shop's key: everything.
    public var staffKey: String?
    /// Keyless, yet answering any `Host` (`--insecure-no-keys`).
    public var insecureNoKeys = false
    /// Web origins (`https://shop.example`) whose pages may call the API (CORS).
    public var corsOrigins: [String] = []
    /// Proxies whose `X-Forwarded-For` names the client (their own address is not the client's).
    public var trustedProxies: [String] = []
    /// POSTs a client address may make per second, sustained; 0 turns the limit off.
    public var postsPerSecondPerClient = 0.0
    /// POSTs a client address may make at once before the rate applies.
    public var postBurstPerClient = 20
    /// Wrong or missing keys a client address may send per minute before it gets 429.
    public var failedKeysPerMinute = 20

    /// No keys, no CORS origins, no rate limit on POSTs; 20 failed keys a minute.
    public init() {}

    /// Whether any key is set.
    var hasKeys: Bool { appKey != nil || staffKey != nil }
}
