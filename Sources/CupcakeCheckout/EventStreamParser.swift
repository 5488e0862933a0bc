import FoundationEssentials

/// Reads Server-Sent Events as their bytes arrive (the WHATWG event-stream format): lines of
/// `field: value`, a blank line ending each message, `:` starting a comment.
public struct EventStreamParser: Sendable {
    /// One message.
    public struct Message: Sendable, Equatable {
        /// `id:`, when the message set one.
        public var id: String?
        /// `event:` (`message` when absent).
        public var event: String
        /// The `data:` lines, joined by newlines.
        public var data: String
    }

    private var line: [UInt8] = []
    private var id: String?
    private var event: String?
    private var data: [String] = []
    private var retry = false

    /// An empty parser.
    public init() {}

    /// The messages these bytes complete.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [Message] {
        var messages: [Message] = []
        for byte in bytes {
            if byte == 0x0A {
                if line.last == 0x0D { line.removeLast() }
                if let message = take(String(decoding: line, as: UTF8.self)) { messages.append(message) }
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        return messages
    }

    /// One line: a field, a comment, or the blank line that ends a message.
    private mutating func take(_ text: String) -> Message? {
        if text.isEmpty {
            defer {
                id = nil
                event = nil
                data = []
                retry = false
            }
            // A `retry:` alone (a server's first words on a stream) comes out as event "retry",
            // which tells a client the stream is open.
            if retry && data.isEmpty && event == nil { return Message(id: nil, event: "retry", data: "") }
            guard !data.isEmpty || event != nil else { return nil }
            return Message(id: id, event: event ?? "message", data: data.joined(separator: "\n"))
        }
        if text.hasPrefix(":") { return nil }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var value = parts.count > 1 ? String(parts[1]) : ""
        if value.hasPrefix(" ") { value.removeFirst() }
        switch parts[0] {
        case "id": id = value
        case "event": event = value
        case "data": data.append(value)
        case "retry": retry = true
        default: break
        }
        return nil
    }
}
