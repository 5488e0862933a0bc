/// An amount of US money in integer cents. Never a floating-point number.
public struct Money: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The amount in cents.
    public var cents: Int

    /// Creates an amount from cents.
    public init(cents: Int) {
        self.cents = cents
    }

    /// Creates an amount from whole dollars and cents, e.g. `Money(dollars: 2, cents: 50)`.
    public init(dollars: Int, cents: Int = 0) {
        self.cents = dollars * 100 + cents
    }

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.cents < rhs.cents }
    public static func * (lhs: Money, rhs: Int) -> Money { Money(cents: lhs.cents * rhs) }

    /// US dollars whatever the machine's locale: "$16.00", "$1,234.50", "-$0.50".
    public var formatted: String {
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        var whole = String(magnitude / 100)
        var grouped = ""
        while whole.count > 3 {
            grouped = "," + whole.suffix(3) + grouped
            whole.removeLast(3)
        }
        let sign = cents < 0 ? "-" : ""
        return "\(sign)$\(whole)\(grouped).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    public var description: String { formatted }
}
