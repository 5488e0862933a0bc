import Foundation

/// Looks at a database file from outside the server that holds it, the way an operator (or
/// another program) would: the WAL's header, the kernel's lock table, the `sqlite3` shell.
public struct DatabaseFileInspector: Sendable {
    /// The database file.
    public let path: String

    /// Inspects the database at `path`.
    public init(path: String) { self.path = path }

    /// The WAL's checkpoint sequence number (its header's bytes 12-15): SQLite adds one each
    /// time it starts the WAL over. Nil when there is no WAL header yet.
    public var walRestarts: UInt32? {
        guard let handle = FileHandle(forReadingAtPath: path + "-wal") else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 32), header.count == 32 else { return nil }
        return header[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Waits until the WAL's restart count reaches `count` (at most `timeout` seconds, polling
    /// every `poll` seconds); returns the count then.
    @discardableResult
    public func waitForWALRestarts(_ count: UInt32, timeout: Double = 120, poll: Double = 0.005) -> UInt32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, (walRestarts ?? 0) < count { usleep(useconds_t(poll * 1_000_000)) }
        return walRestarts ?? 0
    }

    /// The processes holding a POSIX lock on the database file, from `/proc/locks`.
    public var lockHolders: [Int32] {
        var info = stat()
        guard stat(path, &info) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return [] }
        // "1: POSIX  ADVISORY  WRITE 2916 fe:00:16220174 1073741826 1073742335"
        return table.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "POSIX",
                let inode = fields[5].split(separator: ":").last.flatMap({ UInt64($0) }), inode == UInt64(info.st_ino)
            else { return nil }
            return Int32(fields[4])
        }
    }

    /// The device and inode of a file, to tell whether it was replaced; nil when it is gone.
    public static func identity(_ path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }

    /// Whether process `pid` has `file` open under a name that was since deleted (the kernel
    /// shows such links in /proc/PID/fd as "PATH (deleted)").
    public static func process(_ pid: Int32, holdsDeleted file: String) -> Bool {
        let folder = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.contains { entry in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + entry)) == file + " (deleted)"
        }
    }

    /// The descriptors process `pid` has open on `file`, each with whether it is close-on-exec
    /// (from /proc/PID/fdinfo: a descriptor without it would outlive an exec in a child).
    public static func descriptors(of pid: Int32, on file: String) -> [(descriptor: Int, closeOnExec: Bool)] {
        let folder = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.compactMap { entry in
            guard let number = Int(entry),
                (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + entry)) == file,
                let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(entry)", encoding: .utf8),
                let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") })
                    .flatMap({ Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) })
            else { return nil }
            return (number, flags & 0o2_000_000 != 0)
        }
    }

    /// Runs SQL with the `sqlite3` shell on `file` (default: this database), with a 0.2 s busy
    /// timeout.
    public func sqlite3(_ sql: String, file: String? = nil) throws -> ProcessRunner.Result {
        try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/sqlite3"), ["-cmd", ".timeout 200", file ?? path, sql], timeout: 30)
    }
}
