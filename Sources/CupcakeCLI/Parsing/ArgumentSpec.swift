/// One positional argument a command takes: `<id>`, or `-` for standard input.
package struct ArgumentSpec: Sendable {
    /// How usage and help name it: `<id>`, `-`.
    package var name: String
    /// One line of help.
    package var help: String
    /// Whether it may be left out (shown in brackets).
    package var optional: Bool = false
    /// The words a shell may offer for it (none: anything).
    package var values: [String] = []

    /// The usage form: `<id>` or `[-]`.
    var usage: String { optional ? "[\(name)]" : name }

    /// An order's id, as `cupcake order` and `cupcake orders list` print it.
    static let orderID = ArgumentSpec(
        name: "<id>", help: "The order's id, as 'cupcake order' and 'cupcake orders list' print it.")

    /// Standard input as the order's JSON.
    static let standardInput = ArgumentSpec(
        name: "-", help: "Read the order's JSON from standard input; options override its fields.", optional: true)
}
