import CupcakeDomain
import CupcakeJSON
import FoundationEssentials
import Glibc

/// The receipts of the orders this machine placed, kept so that the app key can reach them again
/// (`cupcake orders show/favorite/cancel ID`): each order's id, its receipt token, and the
/// endpoint it was placed at. In `$XDG_DATA_HOME/cupcake/receipts.jsonl`, mode 0600 (the tokens
/// are secrets), one JSON object per line.
///
/// A receipt is appended, never rewritten: one `write` on a descriptor opened with `O_APPEND`
/// (so two `cupcake order`s at once both keep theirs, which a read-modify-write of one JSON array
/// could lose), then `fdatasync` before the order is reported placed. Each record starts with a
/// newline, so a record torn by a crash is ended by the next one and skipped when read, and it
/// costs the same with the ten-thousandth receipt as with the first. Receipts written by earlier
/// versions (`receipts.json`, one array) are still read.
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

        /// The record appended to the file: a newline, then the receipt as one line of JSON.
        var record: [UInt8] {
            var writer = JSONWriter(capacity: 256)
            writer.beginObject()
            writer.key("id")
            writer.string(id)
            writer.key("token")
            writer.string(token)
            writer.key("endpoint")
            writer.string(endpoint)
            writer.key("createdAt")
            writer.string(createdAt)
            writer.endObject()
            return [UInt8(ascii: "\n")] + writer.bytes
        }
    }

    /// The file's path.
    public let file: String
    /// Where earlier versions kept them.
    private let legacyFile: String

    /// The receipts in `directory` (`$XDG_DATA_HOME/cupcake`).
    public init(directory: String) {
        file = PrivateFiles.join(directory, "receipts.jsonl")
        legacyFile = PrivateFiles.join(directory, "receipts.json")
    }

    /// Every receipt kept, oldest first; none when there are none. A line that is not a receipt
    /// (the remains of a crash mid-write) is skipped.
    ///
    /// - Throws: ``CheckoutError`` (configuration) when a file exists but cannot be read.
    public func all() throws(CheckoutError) -> [Receipt] {
        var receipts: [Receipt] = []
        let decoder = JSONDecoder()
        if PrivateFiles.exists(legacyFile) {
            do {
                receipts = try decoder.decode([Receipt].self, from: PrivateFiles.read(legacyFile))
            } catch {
                throw CheckoutError(.configuration, "The receipts file \(legacyFile) is unreadable.")
            }
        }
        guard PrivateFiles.exists(file) else { return receipts }
        let data: Data
        do {
            data = try PrivateFiles.read(file)
        } catch {
            throw CheckoutError(.configuration, "The receipts file \(file) is unreadable.")
        }
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            if let receipt = try? decoder.decode(Receipt.self, from: line) { receipts.append(receipt) }
        }
        return receipts
    }

    /// The receipts for orders placed at `endpoint`, the latest for each order.
    public func receipts(at endpoint: URL) throws(CheckoutError) -> [Receipt] {
        let key = CheckoutConfiguration.display(endpoint)
        var latest: [String: Int] = [:]
        var kept: [Receipt] = []
        for receipt in try all() where receipt.endpoint == key {
            if let index = latest[receipt.id] {
                kept[index] = receipt
            } else {
                latest[receipt.id] = kept.count
                kept.append(receipt)
            }
        }
        return kept
    }

    /// The token of order `id` placed at `endpoint`, if this machine placed it.
    public func token(for id: String, at endpoint: URL) -> String? {
        (try? receipts(at: endpoint))?.last { $0.id == id }?.token
    }

    /// Keeps a receipt (a later one for the same order and endpoint wins when read).
    public func add(_ receipt: Receipt) throws(CheckoutError) {
        let folder = PrivateFiles.folder(of: file)
        do {
            try PrivateFiles.makeFolder(folder)
        } catch {
            throw CheckoutError(.configuration, error.description)
        }
        let existed = PrivateFiles.exists(file)
        let descriptor = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CheckoutError(.configuration, PrivateFiles.FileError(path: file).description)
        }
        defer { close(descriptor) }
        let record = receipt.record
        let written = record.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == record.count, fdatasync(descriptor) == 0 else {
            throw CheckoutError(.configuration, PrivateFiles.FileError(path: file).description)
        }
        // A new file's name is durable once its folder is.
        if !existed { PrivateFiles.syncFolder(folder) }
    }
}
