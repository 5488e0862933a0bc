import Foundation

/// The receipts of the orders this machine placed, kept so that the app key can reach them again
/// (`cupcake orders show/favorite/cancel ID`): each order's id, its receipt token, and the
/// endpoint it was placed at. In `$XDG_DATA_HOME/cupcake/receipts.json`, mode 0600 (the tokens
/// are secrets), written atomically.
public struct Receipts: Sendable {
    /// One order's receipt.
    public struct Receipt: Codable, Sendable, Equatable {
        /// The order's id.
        public var id: String
        /// Its receipt token (`Order-Token`).
        public var token: String
        /// The endpoint it was placed at, as configured (with any credentials left out).
        public var endpoint: String
        /// When the server said it was placed.
        public var createdAt: String

        /// Creates a receipt.
        public init(id: String, token: String, endpoint: String, createdAt: String) {
            self.id = id
            self.token = token
            self.endpoint = endpoint
            self.createdAt = createdAt
        }
    }

    /// The file.
    public let file: URL

    /// The receipts in `directory` (`$XDG_DATA_HOME/cupcake`).
    public init(directory: URL) {
        file = directory.appendingPathComponent("receipts.json")
    }

    /// Every receipt kept, oldest first; none when the file does not exist.
    ///
    /// - Throws: ``CheckoutError`` (configuration) when it exists but cannot be read.
    public func all() throws(CheckoutError) -> [Receipt] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        do {
            return try JSONDecoder().decode([Receipt].self, from: Data(contentsOf: file))
        } catch {
            throw CheckoutError(.configuration, "The receipts file \(file.path) is unreadable.")
        }
    }

    /// The receipts for orders placed at `endpoint`.
    public func receipts(at endpoint: URL) throws(CheckoutError) -> [Receipt] {
        let key = CheckoutConfiguration.display(endpoint)
        return try all().filter { $0.endpoint == key }
    }

    /// The token of order `id` placed at `endpoint`, if this machine placed it.
    public func token(for id: String, at endpoint: URL) -> String? {
        (try? receipts(at: endpoint))?.last { $0.id == id }?.token
    }

    /// Keeps a receipt (replacing an older one for the same order and endpoint).
    public func add(_ receipt: Receipt) throws(CheckoutError) {
        var kept = try all().filter { !($0.id == receipt.id && $0.endpoint == receipt.endpoint) }
        kept.append(receipt)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try PrivateFiles.write(try encoder.encode(kept), to: file)
        } catch let error as PrivateFiles.FileError {
            throw CheckoutError(.configuration, error.description)
        } catch {
            throw CheckoutError(.configuration, "Cannot write \(file.path): \(FileErrorText.reason(error)).")
        }
    }
}
