/// A kind of cupcake, numbered by index exactly as the Cupcake Corner app numbers them.
public enum CakeType: Int, CaseIterable, Sendable, Codable, CustomStringConvertible {
    case vanilla = 0
    case strawberry = 1
    case chocolate = 2
    case rainbow = 3

    /// The name as the app shows it: "Vanilla", "Strawberry", "Chocolate", "Rainbow".
    public var name: String {
        switch self {
        case .vanilla: "Vanilla"
        case .strawberry: "Strawberry"
        case .chocolate: "Chocolate"
        case .rainbow: "Rainbow"
        }
    }

    public var description: String { name }

    /// Parses what a person types: an index ("2") or a name in any case ("chocolate").
    /// - Returns: the cake type, or `nil` when the text names none.
    public init?(argument: String) {
        // Plain loops and a switch: the generic reversing and searching this replaced cost the
        // Swift runtime a type lookup each at start-up (docs/PERFORMANCE.md, section 2).
        var text = Substring(argument)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        if let index = Int(text) {
            guard let type = CakeType(rawValue: index) else { return nil }
            self = type
            return
        }
        switch text.lowercased() {
        case "vanilla": self = .vanilla
        case "strawberry": self = .strawberry
        case "chocolate": self = .chocolate
        case "rainbow": self = .rainbow
        default: return nil
        }
    }

    /// The accepted spellings, for help and error text: "0|vanilla, 1|strawberry, …".
    public static var choices: String {
        var text = ""
        for type in allCases {
            if !text.isEmpty { text += ", " }
            text += "\(type.rawValue)|\(type.name.lowercased())"
        }
        return text
    }
}
