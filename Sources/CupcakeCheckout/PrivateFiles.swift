import FoundationEssentials
import Glibc

/// Files only the user may read: mode 0600 from the moment they exist (never briefly readable by
/// others, whatever the umask), in a folder of mode 0700 when cupcake creates it, written beside
/// their final name and renamed into place, so the name never holds a partial file.
public enum PrivateFiles {
    // Paths are plain strings here, not file URLs: the first `URL.path` a process asks for has
    // the Swift runtime look up `UInt8: Hashable` among the binary's conformance records, about
    // 0.1 ms of a one-shot `cupcake order` (docs/PERFORMANCE.md, section 2).

    /// The folder `path` is in: what comes before its last `/` (`/` for a file at the root, `.`
    /// for a bare name).
    public static func folder(of path: String) -> String { split(path).folder }

    /// `path`'s folder and its last component, trailing slashes aside.
    private static func split(_ path: String) -> (folder: String, name: Substring) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", trimmed) }
        let name = trimmed[trimmed.index(after: slash)...]
        return (slash == trimmed.startIndex ? "/" : String(trimmed[..<slash]), name)
    }

    /// `name` inside `folder`.
    public static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// Creates a new, empty 0600 file next to `final` (same folder, so the rename stays on one
    /// file system), named `.<name>.part-<uuid>`.
    ///
    /// - Throws: the reason, as `strerror` gives it.
    public static func create(beside final: String) throws(FileError) -> String {
        let (folder, name) = split(final)
        let partial = join(folder, ".\(name).part-\(UUID().uuidString)")
        let descriptor = open(partial, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileError(path: final) }
        close(descriptor)
        return partial
    }

    /// Makes `partial` durable, renames it to `final`, then makes the rename durable.
    public static func replace(_ final: String, with partial: String) throws(FileError) {
        let descriptor = open(partial, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(path: final) }
        let synced = fsync(descriptor) == 0
        let code = errno
        close(descriptor)
        guard synced else { throw FileError(path: final, code: code) }
        guard rename(partial, final) == 0 else { throw FileError(path: final) }
        syncFolder(folder(of: final))
    }

    /// Makes the names in `folder` durable (after a file in it was created or renamed).
    public static func syncFolder(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            close(descriptor)
        }
    }

    /// Whether something exists at `path` (following a symbolic link), as `FileManager`'s
    /// `fileExists` says, by access(2) alone: making the default FileManager cost a one-shot
    /// `cupcake order` more than the check itself.
    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// All of the file at `path`.
    ///
    /// - Throws: the reason, as `strerror` gives it (a folder is `EISDIR`).
    public static func read(_ path: String) throws(FileError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(path: path) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, path: path)
    }

    /// All that can be read from `descriptor` until its end (`path` names it in an error).
    ///
    /// - Throws: the reason, as `strerror` gives it.
    public static func read(descriptor: Int32, path: String) throws(FileError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { chunk -> Int in
                let count = Glibc.read(descriptor, chunk.baseAddress, chunk.count)
                if count > 0, let base = chunk.baseAddress { data.append(base, count: count) }
                return count
            }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path)
            }
        }
    }

    /// Creates `folder` (0700) and the folders above it when it does not exist.
    public static func makeFolder(_ folder: String) throws(FileError) {
        // mkdir(2) a component at a time, so a failure names its reason (ENOTDIR, EACCES, ...)
        // rather than Foundation's "NSCocoaErrorDomain error 512".
        // Built a character at a time (splitting into substrings had the Swift runtime look up
        // types on a one-shot command's first receipt).
        var path = folder.hasPrefix("/") ? "" : "."
        var component = ""
        for character in folder + "/" {
            guard character == "/" else {
                component.append(character)
                continue
            }
            guard !component.isEmpty else { continue }
            path += "/"
            path += component
            component = ""
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw FileError(path: path)
            }
        }
        var status = stat()
        guard stat(folder, &status) == 0 else { throw FileError(path: folder) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw FileError(path: folder, code: ENOTDIR) }
    }

    /// Writes `data` to `path` that way, creating its folder (0700) if needed.
    public static func write(_ data: Data, to path: String) throws(FileError) {
        try makeFolder(folder(of: path))
        let partial = try create(beside: path)
        let descriptor = open(partial, O_WRONLY | O_TRUNC | O_CLOEXEC)
        var written = 0
        let complete = data.withUnsafeBytes { bytes -> Bool in
            guard descriptor >= 0, let base = bytes.baseAddress else { return descriptor >= 0 && data.isEmpty }
            while written < bytes.count {
                let step = Glibc.write(descriptor, base + written, bytes.count - written)
                guard step > 0 else { return false }
                written += step
            }
            return true
        }
        let code = errno
        if descriptor >= 0 { close(descriptor) }
        guard complete else {
            unlink(partial)
            throw FileError(path: path, code: code)
        }
        do {
            try replace(path, with: partial)
        } catch {
            unlink(partial)
            throw error
        }
    }

    /// Why a private file could not be written.
    public struct FileError: Error, Sendable, CustomStringConvertible {
        /// The file it was for.
        public var path: String
        /// Why.
        public var reason: String

        init(path: String, code: Int32 = errno) {
            self.path = path
            reason = String(cString: strerror(code))
        }

        init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        public var description: String { "Cannot write \(path): \(reason)." }
    }
}
