import Foundation

/// Collects text written from any thread (a log's chunks, say), for tests to read back.
public final class TextCollector: @unchecked Sendable {
    // Safe: `chunks` is only touched while holding `lock`.
    private let lock = NSLock()
    private var chunks: [String] = []

    /// Starts empty.
    public init() {}

    /// Adds one chunk.
    public func add(_ chunk: String) { lock.withLock { chunks.append(chunk) } }

    /// Everything added so far, in order.
    public var text: String { lock.withLock { chunks.joined() } }

    /// How many chunks were added.
    public var count: Int { lock.withLock { chunks.count } }

    /// Waits (at most `seconds`) until the text ends with `suffix`; whether it does.
    public func waitFor(suffix: String, seconds: Double = 10) -> Bool {
        waitUntil(seconds: seconds) { $0.hasSuffix(suffix) }
    }

    /// Waits (at most `seconds`) until the text contains `part`; whether it does.
    public func waitFor(containing part: String, seconds: Double = 10) -> Bool {
        waitUntil(seconds: seconds) { $0.contains(part) }
    }

    /// Polls the text every 2 ms until `done` holds or `seconds` pass; whether it holds.
    private func waitUntil(seconds: Double, _ done: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !done(text), Date() < deadline { usleep(2_000) }
        return done(text)
    }
}
