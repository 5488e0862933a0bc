import FoundationEssentials
import Glibc

/// A key read from a file (`--api-key-file`, `--staff-key-file`), which, unlike a flag, other
/// users of the machine cannot read in `ps` or `/proc/PID/cmdline`.
///
/// As PostgreSQL does with a password file, the file must be a regular file that neither its
/// group nor others can read or write (mode 0600 or stricter): a key in a file anyone can read
/// is no safer than one on the command line. The key is the file's first line, without the
/// white space around it.
public enum KeyFile {
    /// Why a key file cannot be used.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// The file.
        public var path: String
        /// Why not, in words.
        public var reason: String
        public var description: String { "Cannot use key file \(path): \(reason)." }
    }

    /// The key in the file at `path`.
    ///
    /// - Throws: ``Refusal`` when it cannot be read, is not a regular file, is open to its group
    ///   or others, or holds no key.
    public static func read(_ path: String) throws(Refusal) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Refusal(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        // The mode of the file actually opened (fstat), not of whatever the name points to later.
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw Refusal(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Refusal(path: path, reason: "it is not a regular file") }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw Refusal(
                path: path,
                reason: "its group or others may read or write it (mode 0\(String(mode, radix: 8))); "
                    + "run chmod 600 \(path)")
        }
        let data: Data
        do {
            data = try PrivateFiles.read(descriptor: descriptor, path: path)
        } catch {
            throw Refusal(path: path, reason: error.reason)
        }
        let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? ""
        let key = line.trimmingWhitespace()
        guard !key.isEmpty else { throw Refusal(path: path, reason: "it holds no key") }
        return key
    }

    /// The warning for a key given as a flag: visible to every user of the machine.
    public static func flagWarning(_ flag: String, file: String, environment: String) -> String {
        "warning: \(flag) puts the key in the command line, which every user of this machine can read "
            + "(ps, /proc); use \(file) or \(environment) instead."
    }
}
