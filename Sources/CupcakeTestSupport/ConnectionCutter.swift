import Foundation

/// A TCP relay between a server and its database that cuts one connection at the worst moment,
/// for the "commit outcome unknown" tests: it passes bytes both ways untouched (it does not read
/// the protocol), until a message from the client contains `marker`. Then, by `mode`, it either
/// closes that connection before the message reaches the database (nothing committed), or lets
/// the message through and closes the connection once the database has finished answering it,
/// passing none of the answer on (committed, and the client cannot know). Later connections
/// pass. The only part of PostgreSQL's protocol it knows is ReadyForQuery's five bytes.
public final class ConnectionCutter: @unchecked Sendable {
    // Safe: `armed` and `listener` are only touched while holding `lock`; each relayed
    // connection's `Cut` is shared by its two threads through its own lock.

    /// When to cut.
    public enum Mode: Sendable {
        /// Before the marked message reaches the database.
        case beforeSending
        /// After the database answered the message (committed it), before the answer reaches the
        /// client.
        case afterTheAnswerStarts
    }

    private let lock = NSLock()
    private var armed: (marker: [UInt8], mode: Mode)?
    private var cuts = 0
    private var listener: Int32 = -1
    private let backendPort: Int
    /// The port the client connects to, on 127.0.0.1.
    public private(set) var port = 0

    /// Listens on a free loopback port, relaying to `backendPort`.
    public init(backendPort: Int) throws {
        self.backendPort = backendPort
        let (fd, port) = try LoopbackSockets.listen(purpose: "the cutter")
        self.port = port
        listener = fd
        Thread { [weak self] in self?.acceptLoop(fd) }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Cuts the next connection that carries `marker` (once).
    public func arm(marker: String, mode: Mode) {
        lock.withLock { armed = (Array(marker.utf8), mode) }
    }

    /// How many connections it has cut.
    public var cutCount: Int { lock.withLock { cuts } }

    private func acceptLoop(_ fd: Int32) {
        while true {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            let backend = Self.connect(port: backendPort)
            guard backend >= 0 else {
                close(client)
                continue
            }
            let cut = Cut()
            Thread { self.relay(from: client, to: backend, cut: cut, clientSide: true) }.start()
            Thread { self.relay(from: backend, to: client, cut: cut, clientSide: false) }.start()
        }
    }

    /// A blocking connection to 127.0.0.1:`port` without timeouts (a pooled database
    /// connection may stay idle for long); -1 when refused.
    private static func connect(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        guard LoopbackSockets.connect(fd, port: port) == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    /// One connection's state: whether the answer is to be dropped, and the descriptors.
    private final class Cut: @unchecked Sendable {
        let lock = NSLock()
        var dropAnswer = false
        var closed = false
    }

    private func relay(from source: Int32, to destination: Int32, cut: Cut, clientSide: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        relaying: while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else { break }
            let chunk = Array(buffer[0..<count])
            if clientSide, let mode = takeArmed(ifContainedIn: chunk) {
                if mode == .beforeSending { break }
                cut.lock.withLock { cut.dropAnswer = true }
            }
            if !clientSide, cut.lock.withLock({ cut.dropAnswer }) {
                // Nothing of the answer is passed on. PostgreSQL commits an implicit transaction
                // at the Sync after the statement, and may send the statement's first results
                // before it: the cut waits for ReadyForQuery ('Z', length 5), which comes after
                // the commit, so the transaction is certainly committed when the answer is lost.
                if Self.contains(chunk, [UInt8(ascii: "Z"), 0, 0, 0, 5]) { break }
                continue
            }
            var offset = 0
            while offset < count {
                let written = chunk.withUnsafeBytes { bytes -> Int in
                    guard let base = bytes.baseAddress else { return -1 }
                    return write(destination, base + offset, count - offset)
                }
                guard written > 0 else { break relaying }
                offset += written
            }
        }
        // Either side ending (or a cut) ends the connection for both.
        let first = cut.lock.withLock { () -> Bool in
            defer { cut.closed = true }
            return !cut.closed
        }
        if first {
            shutdown(source, Int32(SHUT_RDWR))
            shutdown(destination, Int32(SHUT_RDWR))
        } else {
            close(source)
            close(destination)
        }
    }

    private func takeArmed(ifContainedIn chunk: [UInt8]) -> Mode? {
        lock.withLock {
            guard let (marker, mode) = armed, Self.contains(chunk, marker) else { return nil }
            armed = nil
            cuts += 1
            return mode
        }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }
}
