import Foundation

/// Runs a program with a pseudo-terminal as its standard input, output and error, as a person at
/// a terminal would, typing lines into it; returns everything the terminal showed.
public enum PseudoTerminal {
    /// What the terminal showed, and how the program ended.
    public struct Result: Sendable {
        /// The exit status.
        public var status: Int32
        /// Everything written to the terminal (the program's output, and the typed lines, which
        /// the terminal echoes).
        public var screen: String
    }

    /// Runs `executable` with `arguments`, typing `lines` (each ended by Enter; a line that is
    /// "\u{4}" alone is Ctrl-D), and waits at most `timeout` seconds (then kills it).
    public static func run(
        _ executable: URL, _ arguments: [String], typing lines: [String], environment: [String: String] = [:],
        timeout: Double = 60
    ) throws -> Result {
        // posix_openpt, unlockpt and ptsname, as Linux does them (Swift's Glibc lacks those, and
        // the request numbers, which are the asm-generic ones on x86-64 and arm64 alike).
        let TIOCGPTN: UInt = 0x8004_5430
        let TIOCSPTLCK: UInt = 0x4004_5431
        let controller = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: CInt = 0
        var number: CInt = 0
        guard controller >= 0, ioctl(controller, TIOCSPTLCK, &unlock) == 0,
            ioctl(controller, TIOCGPTN, &number) == 0
        else { throw POSIXError(.ENXIO) }
        let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard terminal >= 0 else {
            close(controller)
            throw POSIXError(.ENXIO)
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let handle = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        close(terminal)
        // Typed ahead: the terminal keeps the lines and hands the program one per read.
        for line in lines {
            let bytes = Array((line == "\u{4}" ? line : line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(controller, $0.baseAddress, $0.count) }
        }
        var screen = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: controller, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready > 0 {
                let count = read(controller, &buffer, buffer.count)
                // EIO: the program closed its side (it exited).
                if count <= 0 { break }
                screen.append(contentsOf: buffer[0..<count])
            } else if !process.isRunning {
                break
            }
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        close(controller)
        return Result(status: process.terminationStatus, screen: String(decoding: screen, as: UTF8.self))
    }
}
