import CupcakeDomain
import Foundation
import Synchronization

/// A SQLite database as the store holds it: one writer connection (serialized by `writeLock`)
/// and a small pool of reader connections, which WAL lets run beside the writer; the checkpoint
/// thread; and the two halts after which it refuses every write until a restart (a failed fsync,
/// and its file or WAL deleted, renamed or replaced). It knows nothing of orders: the store runs
/// its SQL through ``withWriter(_:)`` and ``withReader(_:)`` (GRDB's `DatabasePool` and
/// `SerializedDatabase` split the same way).
final class SQLiteDatabase: @unchecked Sendable {
    // Safe: `writer` is used only while holding `writeLock`; each reader is used by one thread
    // at a time, handed out and taken back under `readersLock`; `closed` is guarded by both.
    private let writer: SQLiteConnection
    private let writeLock = NSLock()
    private let checkpointTurn = CheckpointTurn()
    private var readers: [SQLiteConnection] = []
    private let readersLock = NSLock()
    private var closed = false
    private var checkpointer: Checkpointer?
    /// The database file and WAL as opened, checked after every write; set once in init.
    private var files: DatabaseFiles?
    /// The file found deleted, renamed or replaced, after which every write is refused; guarded
    /// by `writeLock`.
    private var movedFile: String?
    /// Why the database is not ready (``readiness()``), in words fit to show anyone: the file
    /// found moved.
    private let notReady = Mutex<String?>(nil)
    /// The database file.
    let path: String

    /// Opens (creating if needed) the database at `path` and brings its schema up to
    /// `migrations`; `prepare` then runs on the writer before any other connection opens (the
    /// store reads its state there).
    ///
    /// - Parameters:
    ///   - walRestartFrames: the WAL size (in 4 KiB frames) past which it is started over.
    /// - Throws: ``StorageError`` when it cannot be opened, or its schema is newer than this build.
    init(
        path: String, durability: Durability, walRestartFrames: Int, migrations: [SQLiteSchema.Migration],
        prepare: (SQLiteConnection) throws(StorageError) -> Void
    ) throws(StorageError) {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try? FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A new database is created readable by its owner only (names and addresses), and
        // SQLite gives its WAL the database's mode. This descriptor is opened and closed before
        // SQLite has opened the file, so there is no lock yet that closing it could drop.
        let created = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if created >= 0 { Glibc.close(created) }
        writer = try SQLiteConnection(path: path)
        try writer.execute("PRAGMA journal_mode = WAL")
        switch durability {
        case .process: try writer.execute("PRAGMA synchronous = NORMAL")
        case .full: try writer.execute("PRAGMA synchronous = FULL")
        }
        // Checkpoints run on their own thread and connection (see `Checkpointer`), so a commit
        // never stalls behind copying the WAL into the database; that stall was the p99. No
        // journal_size_limit: truncating the WAL at a restart (and its fdatasync) stalled the
        // writer for 100-300 ms; the WAL is reused from its start instead.
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try Self.migrate(writer, to: migrations)
        try prepare(writer)
        // Both files exist now: the migrations and the state just read opened the WAL.
        files = DatabaseFiles(path: path)
        let turn = checkpointTurn
        checkpointer = try Checkpointer(path: path, durability: durability, restartFrames: walRestartFrames) {
            [writeLock] body in
            // Ask writers to step aside, then take the lock: an unfair lock alone would let a
            // writer that never pauses (a bulk load) starve the checkpoint.
            turn.withLock { turn.waiting = true }
            writeLock.withLock(body)
            turn.withLock {
                turn.waiting = false
                turn.condition.broadcast()
            }
        }
    }

    deinit { close() }

    /// Runs the migrations the database has not had yet, each in a transaction of its own.
    private static func migrate(_ writer: SQLiteConnection, to migrations: [SQLiteSchema.Migration])
        throws(StorageError)
    {
        let current = try writer.integerPragma("PRAGMA user_version")
        guard current <= migrations.count else {
            throw StorageError(
                .schemaTooNew, "database schema \(current) is newer than this cupcake understands (\(migrations.count))"
            )
        }
        for migration in migrations.dropFirst(current) {
            try writer.transaction { () throws(StorageError) in
                try writer.execute(migration.sql)
                try migration.backfill?(writer)
            }
        }
    }

    func close() {
        // After a failed fsync nothing may checkpoint (see Checkpointer), SQLite's own
        // checkpoint when the last connection closes included: the WAL stays whole, and the next
        // start copies it into the database again.
        let failed = checkpointer?.failure != nil
        checkpointer?.stop()
        writeLock.withLock {
            readersLock.withLock {
                guard !closed else { return }
                closed = true
                readers.forEach {
                    if failed { $0.keepWALOnClose() }
                    $0.close()
                }
                readers.removeAll()
            }
            if failed { writer.keepWALOnClose() }
            writer.close()
        }
    }

    // MARK: - Connections

    /// Throws ``StorageError/Code/unavailable`` once the database is closed.
    func checkOpen() throws(StorageError) {
        if readersLock.withLock({ closed }) { throw StorageError(.unavailable, "database is closed") }
    }

    func withWriter<T>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        checkpointTurn.waitWhileCheckpointing()
        writeLock.lock()
        defer { writeLock.unlock() }
        if readersLock.withLock({ closed }) { throw StorageError(.unavailable, "database is closed") }
        if let movedFile { throw Self.movedError(movedFile) }
        if let failure = checkpointer?.failure { throw failure }
        let result: T
        do {
            result = try body(writer)
        } catch {
            // A commit whose fsync failed (with full durability every commit fsyncs the WAL)
            // stops every write until a restart, as a failed sync of the checkpointer does: the
            // kernel reports a write-back error once, so the next commit's fsync succeeding
            // would prove nothing. Without this, the writes stopped only if the checkpointer's
            // own sync of the WAL (every 10 ms) ran while the disk was failing. A failed write
            // (EFBIG past a file-size limit is SQLite's IOERR_WRITE) is answered 503 and may be
            // retried, as a full disk is: nothing it wrote was reported written.
            if let failure = Checkpointer.failedSync(error) { checkpointer?.halt(failure) }
            throw error
        }
        // Before anyone is told that the write committed: a commit into a file that has been
        // deleted or renamed is lost to a restart (see DatabaseFiles).
        if let moved = files?.moved() {
            movedFile = moved
            notReady.withLock { $0 = Self.movedReadiness }
            // Everything committed so far goes into the database file the store has open (if
            // only the WAL was removed, that saves it), and the WAL is emptied, so that a WAL
            // left behind under the old name holds nothing to replay into another database.
            try? writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            throw Self.movedError(moved)
        }
        return result
    }

    private static let movedReadiness =
        "the database file was deleted, renamed or replaced while the server had it open; restart cupcake serve"

    /// Not ready once it refuses writes: closed, halted after a failed fsync (its own or the
    /// checkpointer's), or its database file or WAL deleted, renamed or replaced (noticed here
    /// too, before any write meets it). Each lasts until a restart.
    func readiness() -> String? {
        if readersLock.withLock({ closed }) { return "the database is closed" }
        if checkpointer?.failure != nil {
            return "a write to the database's disk failed (fsync), so no order is stored until cupcake serve is "
                + "restarted on a sound disk"
        }
        if let reason = notReady.withLock({ $0 }) { return reason }
        if files?.moved() != nil { return Self.movedReadiness }
        return nil
    }

    private static func movedError(_ path: String) -> StorageError {
        StorageError(
            .temporary,
            "\(path) was deleted, renamed or replaced while the server had it open; no order is stored until "
                + "cupcake serve is restarted (put the file back first if it was renamed)")
    }

    func withReader<T>(_ body: (SQLiteConnection) throws(StorageError) -> T) throws(StorageError) -> T {
        let connection = try checkOutReader()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOutReader() throws(StorageError) -> SQLiteConnection {
        enum Checkout { case closed, pooled(SQLiteConnection), none }
        let checkout: Checkout = readersLock.withLock {
            if closed { return .closed }
            return readers.popLast().map(Checkout.pooled) ?? .none
        }
        switch checkout {
        case .closed: throw StorageError(.unavailable, "database is closed")
        case .pooled(let connection): return connection
        case .none: return try SQLiteConnection(path: path)
        }
    }

    private func checkIn(_ connection: SQLiteConnection) {
        let keep = readersLock.withLock { () -> Bool in
            guard !closed, readers.count < 8 else { return false }
            readers.append(connection)
            return true
        }
        if !keep {
            if checkpointer?.failure != nil { connection.keepWALOnClose() }
            connection.close()
        }
    }
}

/// Lets the checkpointer take the write lock between two transactions even when writers never
/// pause: while it waits, new writers wait for it.
final class CheckpointTurn: @unchecked Sendable {
    // Safe: `waiting` is only touched while holding `condition`.
    let condition = NSCondition()
    var waiting = false

    func withLock<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    func waitWhileCheckpointing() {
        condition.lock()
        while waiting { condition.wait() }
        condition.unlock()
    }
}
