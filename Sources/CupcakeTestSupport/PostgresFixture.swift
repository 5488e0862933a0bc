import Foundation

/// The PostgreSQL server for the tests: the one `CUPCAKE_TEST_POSTGRES_URL` names (scripts/test
/// starts a private cluster and sets it; scripts/postgres does the same by hand). Each test gets
/// a database of its own (``newDatabase()``), dropped afterwards.
public final class PostgresFixture: @unchecked Sendable {
    // Safe: immutable after init.
    /// The server's address, as `postgres://postgres@127.0.0.1:PORT`.
    public let serverURL: String

    /// The fixture, or the reason there is none.
    public static let shared: Result<PostgresFixture, TestSocketError> = {
        guard let url = ProcessInfo.processInfo.environment["CUPCAKE_TEST_POSTGRES_URL"], !url.isEmpty else {
            return .failure(
                TestSocketError(
                    message: "no PostgreSQL for the tests: run scripts/test (it starts one), or start one and set "
                        + "CUPCAKE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT"))
        }
        return .success(PostgresFixture(serverURL: url))
    }()

    private init(serverURL: String) {
        self.serverURL = serverURL.hasSuffix("/") ? String(serverURL.dropLast()) : serverURL
    }

    /// Runs SQL on the server's `postgres` database with `psql`.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> ProcessRunner.Result {
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/psql"),
            ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", "\(serverURL)/\(database)", "-c", sql], timeout: 60)
        guard result.status == 0 else { throw TestSocketError(message: "psql: \(result.stderr)") }
        return result
    }

    /// A new, empty database for one test; dropped when released.
    public func newDatabase() throws -> PostgresDatabase {
        let name = "cupcake_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try psql("CREATE DATABASE \(name)")
        return PostgresDatabase(fixture: self, name: name)
    }
}

/// One test's database (see ``PostgresFixture/newDatabase()``).
public final class PostgresDatabase: @unchecked Sendable {
    // Safe: immutable after init.
    let fixture: PostgresFixture
    /// Its name.
    public let name: String
    /// Its URL, for `--database` or `OrderStores.open(_:options:)`.
    public var url: String { "\(fixture.serverURL)/\(name)" }

    init(fixture: PostgresFixture, name: String) {
        self.fixture = fixture
        self.name = name
    }

    /// Runs SQL in this database.
    @discardableResult
    public func psql(_ sql: String) throws -> ProcessRunner.Result { try fixture.psql(sql, database: name) }

    deinit {
        _ = try? fixture.psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

/// The storage engines the server suites run against.
public enum Engine: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres
    public var description: String { rawValue }
}
