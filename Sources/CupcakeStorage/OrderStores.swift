/// Opens the store a location names: the one place that knows which engines there are. Nothing
/// above CupcakeStorage names an engine; it asks the store what it can do
/// (``OrderStore/durability``, ``OrderStore/backups``, ``OrderStore/readiness()``).
public enum OrderStores {
    /// How to open a store, beyond its location.
    public struct Options: Sendable {
        /// SQLite: how hard a commit tries to reach the disk.
        public var durability = Durability.full
        /// PostgreSQL: the most connections; 0 for one per HTTP worker and per group-commit
        /// writer, and one more for claims and cancels.
        public var poolSize = 0
        /// The HTTP workers that will call the store at once (sizes PostgreSQL's pool).
        public var workers = 1

        /// The defaults.
        public init(durability: Durability = .full, poolSize: Int = 0, workers: Int = 1) {
            self.durability = durability
            self.poolSize = poolSize
            self.workers = workers
        }
    }

    /// Opens (creating and migrating if needed) the store at `location`: a PostgreSQL URL
    /// (`postgres://…`, `postgresql://…`), or else a SQLite file.
    ///
    /// - Throws: ``StorageError`` when it cannot be opened, or its schema is newer than this build.
    public static func open(_ location: String, options: Options = Options()) throws(StorageError) -> any OrderStore {
        if isPostgreSQL(location) {
            let size =
                options.poolSize > 0
                ? options.poolSize : max(1, options.workers) + PostgresOrderStore.defaultConcurrentWriters + 1
            return try PostgresOrderStore(url: location, poolSize: size)
        }
        return try SQLiteOrderStore(path: location, durability: options.durability)
    }

    /// Whether `location` names a PostgreSQL database rather than a SQLite file.
    public static func isPostgreSQL(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// Checks a backup (a database file not in use): intact, and of a schema this build reads.
    ///
    /// - Returns: how many orders it holds.
    /// - Throws: ``StorageError`` saying what is wrong.
    public static func verifyBackup(at path: String) throws(StorageError) -> Int {
        try SQLiteOrderStore.verify(path: path)
    }
}
