import CupcakeDomain
import FoundationEssentials
import Glibc

/// The saved delivery address (the app's UserDefaults challenge, for a CLI): JSON in
/// `$XDG_CONFIG_HOME/cupcake/address.json`, written atomically.
public struct SavedAddress: Sendable, Equatable, Codable {
    /// The customer's name.
    public var name: String
    /// The street address.
    public var streetAddress: String
    /// The city.
    public var city: String
    /// The ZIP code.
    public var zip: String

    /// Creates an address (values are trimmed, as in an order).
    public init(name: String, streetAddress: String, city: String, zip: String) {
        let order = Order(name: name, streetAddress: streetAddress, city: city, zip: zip)
        self.name = order.name
        self.streetAddress = order.streetAddress
        self.city = order.city
        self.zip = order.zip
    }

    /// Every address rule it breaks, by wire key (the same rules as an order's).
    public func validate() -> [ValidationIssue] {
        Order(name: name, streetAddress: streetAddress, city: city, zip: zip).validate()
            .filter { $0.field != "type" && $0.field != "quantity" }
    }

    /// Fills the order's blank address fields from this address.
    public func fill(_ order: Order) -> Order {
        var filled = order
        if filled.name.isEmpty { filled.name = name }
        if filled.streetAddress.isEmpty { filled.streetAddress = streetAddress }
        if filled.city.isEmpty { filled.city = city }
        if filled.zip.isEmpty { filled.zip = zip }
        return filled
    }

    /// The file it lives in.
    public static func file(in directory: String) -> String {
        PrivateFiles.join(directory, "address.json")
    }

    /// Loads the saved address, or `nil` when none is saved.
    ///
    /// - Throws: ``CheckoutError`` (configuration) when the file exists but cannot be read.
    public static func load(from directory: String) throws(CheckoutError) -> SavedAddress? {
        let path = file(in: directory)
        guard PrivateFiles.exists(path) else { return nil }
        do {
            let data = try PrivateFiles.read(path)
            return try JSONDecoder().decode(SavedAddress.self, from: data)
        } catch {
            throw CheckoutError(
                .configuration,
                "The saved address \(path) is unreadable; run 'cupcake address clear' or set it again.")
        }
    }

    /// Saves atomically (a temporary file renamed over the old one), readable by the user only.
    ///
    /// - Throws: a message naming the file.
    public func save(in directory: String) throws(CheckoutError) {
        let path = Self.file(in: directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try PrivateFiles.write(try encoder.encode(self), to: path)
        } catch let error as PrivateFiles.FileError {
            throw CheckoutError(.configuration, "Cannot write \(error.path): \(error.reason)")
        } catch {
            throw CheckoutError(.configuration, "Cannot write \(path): \(error)")
        }
    }

    /// Removes the saved address; `false` when there was none.
    @discardableResult
    public static func clear(in directory: String) throws(CheckoutError) -> Bool {
        let path = file(in: directory)
        guard PrivateFiles.exists(path) else { return false }
        guard unlink(path) == 0 else {
            throw CheckoutError(.configuration, "Cannot remove \(path): \(PrivateFiles.FileError(path: path).reason)")
        }
        PrivateFiles.syncFolder(directory)
        return true
    }
}
