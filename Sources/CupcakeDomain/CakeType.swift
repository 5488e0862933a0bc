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
        let text = String(argument.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        if let index = Int(text) {
            guard let type = CakeType(rawValue: index) else { return nil }
            self = type
            return
        }
        guard let type = CakeType.allCases.first(where: { $0.name.lowercased() == text.lowercased() }) else {
            return nil
        }
        self = type
    }

    /// The accepted spellings, for help and error text: "0|vanilla, 1|strawberry, …".
    public static var choices: String {
        allCases.map { "\($0.rawValue)|\($0.name.lowercased())" }.joined(separator: ", ")
    }
}
