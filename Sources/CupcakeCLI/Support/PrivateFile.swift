import Foundation

/// Files only the user may read (mode 0600 from the moment they exist), written beside their
/// final name and renamed into place, so the final name never holds a partial file.
enum PrivateFile {
    /// Creates a new empty file next to `final` (same folder, so the rename stays on one file
    /// system), named `.<name>.part-<uuid>`.
    static func create(beside final: URL) throws(CLIError) -> URL {
        let folder = final.deletingLastPathComponent()
        let partial = folder.appendingPathComponent(".\(final.lastPathComponent).part-\(UUID().uuidString)")
        let descriptor = open(partial.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CLIError(.cannotCreate, "Cannot write \(final.path): \(String(cString: strerror(errno))).")
        }
        close(descriptor)
        return partial
    }

    /// Makes `partial` durable and renames it to `final`, then makes the rename durable.
    static func replace(_ final: URL, with partial: URL) throws(CLIError) {
        let descriptor = open(partial.path, O_RDONLY | O_CLOEXEC)
        let synced = descriptor >= 0 && fsync(descriptor) == 0
        let reason = String(cString: strerror(errno))
        if descriptor >= 0 { close(descriptor) }
        guard synced, rename(partial.path, final.path) == 0 else {
            throw CLIError(
                .cannotCreate, "Cannot write \(final.path): \(synced ? String(cString: strerror(errno)) : reason).")
        }
        let folder = open(final.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }
}
