import CSQLite

/// The process-wide SQLite setup, done once before the first connection opens.
enum SQLiteLibrary {
    /// The VFS every connection opens with: SQLite's own "unix-excl".
    ///
    /// The first connection takes a POSIX write lock on the database file and the process keeps
    /// it until its last connection closes; transactions between this process's connections are
    /// then locked in memory (no `fcntl` per transaction), and the WAL index lives in the
    /// process's heap instead of a `-shm` file. So no other process can open the database while
    /// the store has it: a second `cupcake serve` or the `sqlite3` shell is refused. The hazard
    /// is POSIX's: closing *any* descriptor of the file drops every lock the process holds on
    /// it, and SQLite, believing it still holds the lock, never takes it again. So nothing in
    /// this process opens the database file or its WAL except SQLite (docs/RELIABILITY.md, "The
    /// database lock"; `DatabaseLockTests` checks `/proc/locks` past several WAL restarts).
    static let vfsName: String = {
        // Before anything initializes SQLite: no global allocation statistics, whose lock every
        // allocation took (about 3% of an insert's time, measured). A documented
        // `sqlite3_config` option, with no effect on what is stored.
        _ = cupcake_sqlite_disable_memstatus()
        return "unix-excl"
    }()
}
