/// A Cupcake Corner order: what to bake and where to deliver it.
///
/// The special-request reset rule holds on every path into an `Order`: turning
/// ``specialRequestEnabled`` off clears ``extraFrosting`` and ``addSprinkles`` (the setter, the
/// initializer and decoding all apply it). Address fields are stored trimmed of whitespace and
/// newlines. Out-of-range values (a type of 7, a quantity of 2) can be held so that
/// ``validate(includingAddress:)`` can report them; they are never priced or sent.
public struct Order: Sendable, Hashable {
    /// The smallest and largest quantity the app's stepper allows.
    public static let quantityRange = 3...20
    /// The longest an address field may be, in Unicode scalars (not characters: one character
    /// can hold thousands of combining marks).
    public static let maximumFieldLength = 100
    /// The longest an address field may be, in UTF-8 bytes.
    public static let maximumFieldBytes = 400

    /// The cake type's index (0 Vanilla, 1 Strawberry, 2 Chocolate, 3 Rainbow).
    public var type: Int
    /// How many cupcakes, 3...20 when valid.
    public var quantity: Int
    /// Whether special requests are on; turning it off clears both extras.
    public var specialRequestEnabled: Bool {
        didSet {
            if !specialRequestEnabled {
                extraFrosting = false
                addSprinkles = false
            }
        }
    }
    /// Extra frosting, $1.00 per cake while special requests are on.
    public var extraFrosting: Bool
    /// Sprinkles, $0.50 per cake while special requests are on.
    public var addSprinkles: Bool
    /// The customer's name, stored trimmed.
    public var name: String { didSet { name = Order.trimmed(name) } }
    /// The street address, stored trimmed.
    public var streetAddress: String { didSet { streetAddress = Order.trimmed(streetAddress) } }
    /// The city, stored trimmed.
    public var city: String { didSet { city = Order.trimmed(city) } }
    /// The ZIP code, stored trimmed.
    public var zip: String { didSet { zip = Order.trimmed(zip) } }

    /// Creates an order; the defaults are the app's (three vanilla, no extras, no address).
    public init(
        type: Int = CakeType.vanilla.rawValue,
        quantity: Int = 3,
        specialRequestEnabled: Bool = false,
        extraFrosting: Bool = false,
        addSprinkles: Bool = false,
        name: String = "",
        streetAddress: String = "",
        city: String = "",
        zip: String = ""
    ) {
        self.type = type
        self.quantity = quantity
        self.specialRequestEnabled = specialRequestEnabled
        self.extraFrosting = specialRequestEnabled && extraFrosting
        self.addSprinkles = specialRequestEnabled && addSprinkles
        self.name = Order.trimmed(name)
        self.streetAddress = Order.trimmed(streetAddress)
        self.city = Order.trimmed(city)
        self.zip = Order.trimmed(zip)
    }

    /// The cake type, or `nil` when ``type`` is out of range.
    public var cakeType: CakeType? { CakeType(rawValue: type) }

    /// Whether every address field has a visible character, as the app's `hasValidAddress`
    /// (``TextSafety/isBlank(_:)``).
    public var hasValidAddress: Bool {
        ![name, streetAddress, city, zip].contains(where: TextSafety.isBlank)
    }

    /// The app's confirmation: "Your order for 5x chocolate cupcakes is on its way!"
    public var confirmationMessage: String {
        let kind = cakeType?.name.lowercased() ?? "type \(type)"
        return "Your order for \(quantity)x \(kind) cupcakes is on its way!"
    }

    /// The text without leading and trailing whitespace and newlines (Unicode's definition).
    static func trimmed(_ text: String) -> String {
        // Fast path: nothing to trim when both ends are visible ASCII (the common case).
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last else { return text }
        if first > 0x20 && first < 0x7F && last > 0x20 && last < 0x7F { return text }
        let scalars = text.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        guard let end = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(scalars[start...end])
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar == "\u{85}" || (0x0A...0x0D).contains(scalar.value)
    }
}
