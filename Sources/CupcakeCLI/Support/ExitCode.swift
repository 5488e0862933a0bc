/// A process exit status, with the sysexits codes cupcake uses.
public struct ExitCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Success.
    public static let success = ExitCode(rawValue: 0)
    /// The command line was wrong (EX_USAGE).
    public static let usage = ExitCode(rawValue: 64)
    /// The order or its JSON breaks a rule (EX_DATAERR).
    public static let data = ExitCode(rawValue: 65)
    /// The thing asked for does not exist, e.g. an unknown order id (EX_NOINPUT).
    public static let notFound = ExitCode(rawValue: 66)
    /// The endpoint cannot be reached (EX_UNAVAILABLE).
    public static let unavailable = ExitCode(rawValue: 69)
    /// A file could not be written (EX_CANTCREAT).
    public static let cannotCreate = ExitCode(rawValue: 73)
    /// An I/O error, e.g. the database could not be opened (EX_IOERR).
    public static let ioError = ExitCode(rawValue: 74)
    /// A timeout, or still failing after the retries (EX_TEMPFAIL).
    public static let temporary = ExitCode(rawValue: 75)
    /// The endpoint answered something that is not the expected JSON (EX_PROTOCOL).
    public static let `protocol` = ExitCode(rawValue: 76)
    /// The endpoint refused the credentials (EX_NOPERM).
    public static let permission = ExitCode(rawValue: 77)
    /// A configuration problem (EX_CONFIG).
    public static let config = ExitCode(rawValue: 78)

    public var description: String { String(rawValue) }
}
