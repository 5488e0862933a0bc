import Foundation

/// Files only the user may read: mode 0600 from the moment they exist (never briefly readable by
/// others, whatever the umask), in a folder of mode 0700 when cupcake creates it, written beside
/// their final name and renamed into place, so the name never holds a partial file.
public enum PrivateFiles {
    /// Creates a new, empty 0600 file next to `final` (same folder, so the rename stays on one
    /// file system), named `.<name>.part-<uuid>`.
    ///
    /// - Throws: the reason, as `strerror` gives it.
    public static func create(beside final: URL) throws(FileError) -> URL {
        let folder = final.deletingLastPathComponent()
        let partial = folder.appendingPathComponent(
            ".\(final.lastPathComponent).part-\(UUID().uuidString)", isDirectory: false)
        let descriptor = open(partial.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileError(path: final.path) }
        close(descriptor)
        return partial
    }

    /// Makes `partial` durable, renames it to `final`, then makes the rename durable.
    public static func replace(_ final: URL, with partial: URL) throws(FileError) {
        let descriptor = open(partial.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(path: final.path) }
        let synced = fsync(descriptor) == 0
        let code = errno
        close(descriptor)
        guard synced else { throw FileError(path: final.path, code: code) }
        guard rename(partial.path, final.path) == 0 else { throw FileError(path: final.path) }
        syncFolder(final.deletingLastPathComponent())
    }

    /// Makes the names in `folder` durable (after a file in it was created or renamed).
    public static func syncFolder(_ folder: URL) {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            close(descriptor)
        }
    }

    /// Whether something exists at `url` (following a symbolic link), as `FileManager`'s
    /// `fileExists` says, by access(2) alone: making the default FileManager cost a one-shot
    /// `cupcake order` more than the check itself.
    public static func exists(_ url: URL) -> Bool {
        access(url.path, F_OK) == 0
    }

    /// Creates `folder` (0700) and the folders above it when it does not exist.
    public static func makeFolder(_ folder: URL) throws(FileError) {
        // mkdir(2) a component at a time, so a failure names its reason (ENOTDIR, EACCES, ...)
        // rather than Foundation's "NSCocoaErrorDomain error 512".
        // Built a character at a time (splitting into substrings had the Swift runtime look up
        // types on a one-shot command's first receipt).
        let full = folder.path
        var path = full.hasPrefix("/") ? "" : "."
        var component = ""
        for character in full + "/" {
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
        guard stat(folder.path, &status) == 0 else { throw FileError(path: folder.path) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw FileError(path: folder.path, code: ENOTDIR) }
    }

    /// Writes `data` to `url` that way, creating its folder (0700) if needed.
    public static func write(_ data: Data, to url: URL) throws(FileError) {
        try makeFolder(url.deletingLastPathComponent())
        let partial = try create(beside: url)
        let descriptor = open(partial.path, O_WRONLY | O_TRUNC | O_CLOEXEC)
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
            unlink(partial.path)
            throw FileError(path: url.path, code: code)
        }
        do {
            try replace(url, with: partial)
        } catch {
            unlink(partial.path)
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
