import Foundation

/// The identity (device and inode) of the database file and its WAL when the store opened them,
/// to notice either being deleted, renamed or replaced while the store runs.
///
/// SQLite keeps writing through the descriptors it has, so after `rm orders.sqlite-wal` every
/// commit still succeeds, into a file nobody can reopen: a kill -9 then loses every order since
/// the last checkpoint, and a WAL left at the old name beside a renamed database would be
/// replayed into whatever database is created there next. SQLite's own check
/// (`SQLITE_FCNTL_HAS_MOVED`) covers the database file only (it keeps no inode record for a
/// WAL), so both are checked here, with one `stat` each, after every write transaction and
/// before anyone is told it committed (`SQLiteDatabase.withWriter`). Nothing is opened: a
/// `stat` takes no descriptor, so it cannot drop the process's lock on the database.
struct DatabaseFiles: Sendable {
    private struct Identity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    let databasePath: String
    let walPath: String
    private let database: Identity?
    private let wal: Identity?

    /// Records the identity of the files at `path` and `path-wal` as they are now.
    init(path: String) {
        databasePath = path
        walPath = path + "-wal"
        database = Identity(path: databasePath)
        wal = Identity(path: walPath)
    }

    /// Which file is no longer the one the store opened, or nil when both still are.
    func moved() -> String? {
        if database != nil, Identity(path: databasePath) != database { return databasePath }
        if wal != nil, Identity(path: walPath) != wal { return walPath }
        return nil
    }
}
