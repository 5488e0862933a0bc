import CMicroHTTPD
import CupcakeStorage
import Foundation
import Synchronization

/// Makes the copies `GET /api/backup` sends, one at a time, each on a thread of its own.
///
/// The copy is written by SQLite (`VACUUM INTO`, see ``OrderBackup``) into a new file beside the
/// database, named by the server (`.orders.sqlite.backup-<uuid>`, mode 0600), never by a client.
/// Once written it is opened, unlinked and handed to libmicrohttpd as an open descriptor: it
/// takes no disk space after it is sent, or after the client leaves. A copy left behind by a
/// crash mid-backup is removed when the server next starts (``removeLeftovers()``); no other
/// server can be making one then, because the database is held exclusively.
final class BackupMaker: Sendable {
    private let source: any OrderBackup
    private let directory: String
    private let prefix: String
    private let busy = Atomic<Bool>(false)

    /// - Parameter databasePath: the database the copies are of; they are made in its folder.
    init(source: any OrderBackup, databasePath: String) {
        self.source = source
        let url = URL(fileURLWithPath: databasePath)
        directory = url.deletingLastPathComponent().path
        prefix = "." + url.lastPathComponent + ".backup-"
    }

    /// Starts a copy; `done` runs on the copy's thread with the open file or the failure.
    /// Returns false, starting nothing, while another copy is being made.
    func start(_ done: @escaping @Sendable (Result<ResponseFile, StorageError>) -> Void) -> Bool {
        guard !busy.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        let thread = Thread { [self] in
            pthread_setname_np(pthread_self(), "cupcake-backup")
            let result = make()
            busy.store(false, ordering: .releasing)
            done(result)
        }
        thread.start()
        return true
    }

    private func make() -> Result<ResponseFile, StorageError> {
        let path = directory + "/" + prefix + UUID().uuidString
        defer {
            unlink(path)
            unlink(path + "-journal")
        }
        // Created empty first, so that it is the server's own new file, private from the start.
        let created = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard created >= 0 else {
            return .failure(StorageError(.temporary, "cannot create \(path): \(String(cString: strerror(errno)))"))
        }
        close(created)
        do {
            try source.backup(to: path)
        } catch {
            return .failure(error)
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            return .failure(StorageError(.temporary, "cannot read the copy \(path): \(reason)"))
        }
        return .success(ResponseFile(descriptor: descriptor, size: Int(info.st_size)))
    }

    /// Removes copies a crash left half made.
    func removeLeftovers() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(prefix) {
            unlink(directory + "/" + name)
        }
    }
}
