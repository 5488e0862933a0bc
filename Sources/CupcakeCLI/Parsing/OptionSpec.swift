/// One option a command accepts: its names, whether it takes a value, and its help.
package struct OptionSpec: Sendable {
    /// The names, long first: `["--qty", "--quantity"]`, or `["-h", "--help"]`.
    var names: [String]
    /// The value's placeholder (`<n>`), or `nil` for a flag.
    var valueName: String?
    /// One line of help.
    var help: String
    /// The default shown in help, if any.
    var defaultValue: String?
    /// The help section it is listed under.
    var section: String = "OPTIONS"
    /// Whether the command cannot run without it (shown without brackets in the usage line).
    var required = false

    /// The name a parsed value is stored under: the first long name.
    var key: String { names.first(where: { $0.hasPrefix("--") }) ?? names[0] }

    var takesValue: Bool { valueName != nil }

    /// How the usage line shows it: `[--port <port>]`, `--to <file>`.
    var usage: String {
        let text = valueName.map { "\(key) \($0)" } ?? key
        return required ? text : "[\(text)]"
    }

    static func flag(_ names: String..., help: String, section: String = "OPTIONS") -> OptionSpec {
        OptionSpec(names: names, valueName: nil, help: help, defaultValue: nil, section: section)
    }

    static func value(
        _ names: String..., valueName: String, help: String, defaultValue: String? = nil, section: String = "OPTIONS",
        required: Bool = false
    ) -> OptionSpec {
        OptionSpec(
            names: names, valueName: valueName, help: help, defaultValue: defaultValue, section: section,
            required: required)
    }

    static let help = OptionSpec.flag("-h", "--help", help: "Show help information.")
}
