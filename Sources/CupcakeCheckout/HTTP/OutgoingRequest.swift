import FoundationEssentials

/// A request the checkout client sends: method, URL, headers and body.
struct OutgoingRequest: Sendable {
    var method: String
    var url: URL
    /// Header lines in order; set with ``setHeader(_:_:)``.
    private(set) var headers: [(name: String, value: String)] = []
    var body: Data?

    init(method: String, url: URL, body: Data? = nil) {
        self.method = method
        self.url = url
        self.body = body
    }

    /// Sets a header, replacing one of the same name (any case).
    mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.lowercased() == name.lowercased() }
        headers.append((name, value))
    }
}
