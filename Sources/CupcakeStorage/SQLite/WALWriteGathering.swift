import CSQLite
import Foundation

/// The store's SQLite VFS, "cupcake-excl": "unix-excl" except that a WAL file's writes are
/// gathered and reach the file in one `pwrite` per commit instead of two per frame.
///
/// SQLite appends each WAL frame as two writes, its 24-byte header and then the page, so a commit
/// that changes the table and its three indexes made eight or more system calls, each one
/// reaching into one or two page-cache pages: perf put those writes at a fifth of the commit
/// thread's time in the server, and a third of an insert's measured alone. Here a transaction's frames are copied into one buffer and written when
/// the commit frame's page arrives, inside that same `xWrite` call. So:
/// - a failed write still reaches SQLite as the commit's own error, and SQLite rolls the
///   transaction back exactly as before;
/// - SQLite publishes the new frames in its WAL index only after that call returns, so readers
///   and the checkpointer (other connections, with their own file handles) never see a frame
///   that is not in the file, and a commit that has returned is in the file (it survives
///   kill -9 as before; with `synchronous=FULL` the fsync that follows covers it too).
///
/// Anything else done with a WAL file (a read, sync, truncate, size query, file control or close)
/// first writes out what is gathered, and so does a buffer reaching 96 KiB (a big transaction
/// spilling pages before its commit). One case ends with bytes still gathered: a transaction that
/// spilled and then rewrote a spilled page has its frames' checksums rewritten after the commit
/// frame, headers only, the commit frame's last. The page data is already in the file; the store
/// writes the rest right after COMMIT (`SQLiteConnection.transaction`), before it answers anyone.
/// Database files are opened as "unix-excl" opens them, untouched.
enum WALWriteGathering {
    /// The VFS name to open connections with: ours, or "unix-excl" if it could not be registered.
    static let vfsName: String = register() ? "cupcake-excl" : "unix-excl"

    /// Writes out whatever the connection's WAL still has gathered; a commit leaves nothing
    /// behind, so this is a check after each one. Returns SQLite's result code.
    static func flush(walOf database: OpaquePointer) -> Int32 {
        wal(of: database).map(flush) ?? SQLITE_OK
    }

    /// How many bytes the connection's WAL has gathered and not yet written, or nil when its
    /// WAL is not open through this VFS (for tests).
    static func pendingBytes(walOf database: OpaquePointer) -> Int? {
        wal(of: database).map { Int($0.pointee.pendingBytes) }
    }

    /// The connection's WAL file, when it is open through this VFS.
    private static func wal(of database: OpaquePointer) -> UnsafeMutablePointer<cupcake_wal_file>? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(database, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) == SQLITE_OK else {
            return nil
        }
        return gathered(file)
    }

    // MARK: - Registration

    /// "unix-excl", whose files we wrap; set once, before the VFS is registered.
    nonisolated(unsafe) private static let base: UnsafeMutablePointer<sqlite3_vfs>? = sqlite3_vfs_find("unix-excl")
    /// Where the underlying file starts inside our file's allocation.
    private static let realOffset = (MemoryLayout<cupcake_wal_file>.size + 15) & ~15
    /// Gathered writes are written out before they pass this. The unix VFS writes at most 128 KiB
    /// in one call (it masks the length with 0x1ffff), so a gathered run must stay below that.
    private static let limit = 96 * 1024
    /// SQLITE_IOERR_WRITE (a macro expression Swift does not import).
    private static let writeError = SQLITE_IOERR | (3 << 8)

    private static func register() -> Bool {
        // First, before anything initializes SQLite (finding a VFS does): no global allocation
        // statistics, whose lock every allocation took (about 3% of an insert's time, measured).
        _ = cupcake_sqlite_disable_memstatus()
        guard let base else { return false }
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: base.pointee)
        vfs.pointee.pNext = nil
        vfs.pointee.zName = UnsafePointer(strdup("cupcake-excl"))
        vfs.pointee.szOsFile = Int32(realOffset) + base.pointee.szOsFile
        vfs.pointee.xOpen = open
        return sqlite3_vfs_register(vfs, 0) == SQLITE_OK
    }

    /// Opens database files as "unix-excl" does; a WAL file is opened inside our wrapper.
    private static let open:
        @convention(c) (
            UnsafeMutablePointer<sqlite3_vfs>?, sqlite3_filename?, UnsafeMutablePointer<sqlite3_file>?, Int32,
            UnsafeMutablePointer<Int32>?
        ) -> Int32 = { _, name, file, flags, outFlags in
            guard let file, let base, let openBase = base.pointee.xOpen else { return SQLITE_CANTOPEN }
            guard flags & SQLITE_OPEN_WAL != 0 else { return openBase(base, name, file, flags, outFlags) }
            let raw = UnsafeMutableRawPointer(file)
            let real = (raw + realOffset).bindMemory(to: sqlite3_file.self, capacity: 1)
            let code = openBase(base, name, real, flags, outFlags)
            guard code == SQLITE_OK else {
                file.pointee.pMethods = nil  // SQLite's rule for a failed open: nothing to close
                return code
            }
            raw.bindMemory(to: cupcake_wal_file.self, capacity: 1).initialize(
                to: cupcake_wal_file(
                    base: sqlite3_file(pMethods: methods), real: real, pending: nil, pendingOffset: 0,
                    pendingBytes: 0, capacity: 0, commitFrameStarted: 0))
            return SQLITE_OK
        }

    // MARK: - The WAL file's methods

    /// Version 1 methods: SQLite uses shared memory and memory mapping only on database files.
    nonisolated(unsafe) private static let methods: UnsafePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(
            to: sqlite3_io_methods(
                iVersion: 1, xClose: close, xRead: read, xWrite: write, xTruncate: truncate, xSync: sync,
                xFileSize: fileSize, xLock: lock, xUnlock: unlock, xCheckReservedLock: checkReservedLock,
                xFileControl: fileControl, xSectorSize: sectorSize, xDeviceCharacteristics: deviceCharacteristics,
                xShmMap: nil, xShmLock: nil, xShmBarrier: nil, xShmUnmap: nil, xFetch: nil, xUnfetch: nil))
        return UnsafePointer(methods)
    }()

    /// Our wrapper behind a file pointer, or nil for any other file.
    private static func gathered(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<cupcake_wal_file>?
    {
        guard let file, file.pointee.pMethods == methods else { return nil }
        return UnsafeMutableRawPointer(file).assumingMemoryBound(to: cupcake_wal_file.self)
    }

    private static func realMethods(_ wal: UnsafeMutablePointer<cupcake_wal_file>) -> sqlite3_io_methods {
        wal.pointee.real.pointee.pMethods.pointee
    }

    /// Writes the gathered bytes in one call. On failure they are dropped: the error reaches
    /// SQLite through the call that asked for them, and SQLite rolls the transaction back.
    private static func flush(_ wal: UnsafeMutablePointer<cupcake_wal_file>) -> Int32 {
        guard wal.pointee.pendingBytes > 0, let write = realMethods(wal).xWrite else { return SQLITE_OK }
        let code = write(wal.pointee.real, wal.pointee.pending, wal.pointee.pendingBytes, wal.pointee.pendingOffset)
        wal.pointee.pendingBytes = 0
        return code
    }

    /// Makes room for `total` gathered bytes; false when memory is short (write through then).
    private static func reserve(_ wal: UnsafeMutablePointer<cupcake_wal_file>, _ total: Int) -> Bool {
        if total <= Int(wal.pointee.capacity) { return true }
        var capacity = max(Int(wal.pointee.capacity), 64 * 1024)
        while capacity < total { capacity *= 2 }
        guard let grown = realloc(wal.pointee.pending, capacity) else { return false }
        wal.pointee.pending = grown.assumingMemoryBound(to: UInt8.self)
        wal.pointee.capacity = Int32(capacity)
        return true
    }

    private static let write:
        @convention(c) (UnsafeMutablePointer<sqlite3_file>?, UnsafeRawPointer?, Int32, sqlite3_int64) -> Int32 = {
            file, data, amount, offset in
            guard let wal = gathered(file), let data, amount >= 0 else { return SQLITE_MISUSE }
            let count = Int(amount)
            let start = wal.pointee.pendingOffset
            let end = start + sqlite3_int64(wal.pointee.pendingBytes)
            if wal.pointee.pendingBytes > 0, offset >= start, offset + sqlite3_int64(count) <= end {
                // Rewriting a frame gathered earlier in this transaction.
                (wal.pointee.pending + Int(offset - start)).update(
                    from: data.assumingMemoryBound(to: UInt8.self), count: count)
            } else {
                if wal.pointee.pendingBytes > 0, offset != end || Int(wal.pointee.pendingBytes) + count > limit {
                    let code = flush(wal)
                    guard code == SQLITE_OK else { return code }
                }
                guard count <= limit, reserve(wal, Int(wal.pointee.pendingBytes) + count) else {
                    wal.pointee.commitFrameStarted = 0
                    let code = flush(wal)
                    guard code == SQLITE_OK, let write = realMethods(wal).xWrite else { return writeError }
                    return write(wal.pointee.real, data, amount, offset)
                }
                if wal.pointee.pendingBytes == 0 { wal.pointee.pendingOffset = offset }
                (wal.pointee.pending + Int(wal.pointee.pendingBytes)).update(
                    from: data.assumingMemoryBound(to: UInt8.self), count: count)
                wal.pointee.pendingBytes += amount
            }
            // A frame is written as its 24-byte header, then its page. Bytes 4-7 of the header
            // hold the database size after the commit, which is nonzero only in a commit frame;
            // once that frame's page is in, the transaction is complete: write it out now.
            if count == 24 {
                let header = data.assumingMemoryBound(to: UInt8.self)
                wal.pointee.commitFrameStarted = (header[4] | header[5] | header[6] | header[7]) != 0 ? 1 : 0
                return SQLITE_OK
            }
            if wal.pointee.commitFrameStarted != 0 {
                wal.pointee.commitFrameStarted = 0
                return flush(wal)
            }
            return SQLITE_OK
        }

    private static let close: @convention(c) (UnsafeMutablePointer<sqlite3_file>?) -> Int32 = { file in
        guard let wal = gathered(file) else { return SQLITE_MISUSE }
        let flushed = flush(wal)
        free(wal.pointee.pending)
        wal.pointee.pending = nil
        wal.pointee.capacity = 0
        let closed = realMethods(wal).xClose?(wal.pointee.real) ?? SQLITE_OK
        return flushed != SQLITE_OK ? flushed : closed
    }

    private static let read:
        @convention(c) (UnsafeMutablePointer<sqlite3_file>?, UnsafeMutableRawPointer?, Int32, sqlite3_int64) -> Int32 =
            {
                file, data, amount, offset in
                guard let wal = gathered(file) else { return SQLITE_MISUSE }
                let code = flush(wal)
                guard code == SQLITE_OK else { return code }
                return realMethods(wal).xRead?(wal.pointee.real, data, amount, offset) ?? SQLITE_MISUSE
            }

    private static let truncate: @convention(c) (UnsafeMutablePointer<sqlite3_file>?, sqlite3_int64) -> Int32 = {
        file, size in
        guard let wal = gathered(file) else { return SQLITE_MISUSE }
        let code = flush(wal)
        guard code == SQLITE_OK else { return code }
        return realMethods(wal).xTruncate?(wal.pointee.real, size) ?? SQLITE_MISUSE
    }

    private static let sync: @convention(c) (UnsafeMutablePointer<sqlite3_file>?, Int32) -> Int32 = { file, flags in
        guard let wal = gathered(file) else { return SQLITE_MISUSE }
        let code = flush(wal)
        guard code == SQLITE_OK else { return code }
        return realMethods(wal).xSync?(wal.pointee.real, flags) ?? SQLITE_MISUSE
    }

    private static let fileSize:
        @convention(c) (UnsafeMutablePointer<sqlite3_file>?, UnsafeMutablePointer<sqlite3_int64>?) -> Int32 = {
            file, size in
            guard let wal = gathered(file) else { return SQLITE_MISUSE }
            let code = flush(wal)
            guard code == SQLITE_OK else { return code }
            return realMethods(wal).xFileSize?(wal.pointee.real, size) ?? SQLITE_MISUSE
        }

    private static let fileControl:
        @convention(c) (UnsafeMutablePointer<sqlite3_file>?, Int32, UnsafeMutableRawPointer?) -> Int32 = {
            file, operation, argument in
            guard let wal = gathered(file) else { return SQLITE_MISUSE }
            let code = flush(wal)
            guard code == SQLITE_OK else { return code }
            return realMethods(wal).xFileControl?(wal.pointee.real, operation, argument) ?? SQLITE_NOTFOUND
        }

    private static let lock: @convention(c) (UnsafeMutablePointer<sqlite3_file>?, Int32) -> Int32 = { file, level in
        guard let wal = gathered(file) else { return SQLITE_MISUSE }
        return realMethods(wal).xLock?(wal.pointee.real, level) ?? SQLITE_OK
    }

    private static let unlock: @convention(c) (UnsafeMutablePointer<sqlite3_file>?, Int32) -> Int32 = {
        file, level in
        guard let wal = gathered(file) else { return SQLITE_MISUSE }
        return realMethods(wal).xUnlock?(wal.pointee.real, level) ?? SQLITE_OK
    }

    private static let checkReservedLock:
        @convention(c) (UnsafeMutablePointer<sqlite3_file>?, UnsafeMutablePointer<Int32>?) -> Int32 = {
            file, result in
            guard let wal = gathered(file) else { return SQLITE_MISUSE }
            return realMethods(wal).xCheckReservedLock?(wal.pointee.real, result) ?? SQLITE_OK
        }

    private static let sectorSize: @convention(c) (UnsafeMutablePointer<sqlite3_file>?) -> Int32 = { file in
        guard let wal = gathered(file) else { return 4096 }
        return realMethods(wal).xSectorSize?(wal.pointee.real) ?? 4096
    }

    private static let deviceCharacteristics: @convention(c) (UnsafeMutablePointer<sqlite3_file>?) -> Int32 = {
        file in
        guard let wal = gathered(file) else { return 0 }
        return realMethods(wal).xDeviceCharacteristics?(wal.pointee.real) ?? 0
    }
}
