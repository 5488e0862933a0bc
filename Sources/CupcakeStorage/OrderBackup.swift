/// A store that can write a consistent copy of itself while it keeps taking orders.
public protocol OrderBackup: Sendable {
    /// The database file the copies are of; they are made in its folder.
    var databasePath: String { get }

    /// Writes a consistent copy of the database, as of the moment the copy starts, to `path`,
    /// which must not exist or be an empty file. Orders keep being committed meanwhile.
    ///
    /// - Parameter path: a file the server chose (never one a client named).
    func backup(to path: String) throws(StorageError)
}
