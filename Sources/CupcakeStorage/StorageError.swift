/// A storage failure: a code the server maps to an answer, and a message for the log (never
/// shown to clients).
public struct StorageError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The database cannot be opened or is closed.
        public static let unavailable = Code(name: "unavailable")
        /// A statement failed.
        public static let failed = Code(name: "failed")
        /// A uniqueness or other constraint was violated.
        public static let conflict = Code(name: "conflict")
        /// The disk is full or failing, memory ran out, or the database was busy: nothing was
        /// written, and the same write may succeed later.
        public static let temporary = Code(name: "temporary")
        /// The schema is newer than this build understands.
        public static let schemaTooNew = Code(name: "schema too new")
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// Details, for logs.
    public var message: String
    /// SQLite's extended result code, when SQLite reported the failure.
    var sqliteResult: Int32?

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "storage \(code): \(message)" }
}
