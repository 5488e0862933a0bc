/// One option a command accepts: its names, whether it takes a value, and its help.
package struct OptionSpec: Sendable {
    /// The names, long first: `["--qty", "--quantity"]`, or `["-h", "--help"]`.
    package var names: [String]
    /// The value's placeholder (`<n>`), or `nil` for a flag.
    package var valueName: String?
    /// One line of help.
    var help: String
    /// The default shown in help, if any.
    var defaultValue: String?
    /// The help section it is listed under.
    var section: String = "OPTIONS"
    /// Whether the command cannot run without it (shown without brackets in the usage line).
    var required = false
    /// What a shell may offer for its value.
    var completion: ValueCompletion = .none

    /// What a shell's completion offers for an option's value.
    enum ValueCompletion: Sendable, Equatable {
        /// Nothing in particular (a name, a number).
        case none
        /// One of these words.
        case words([String])
        /// A file name.
        case file
    }

    /// The name a parsed value is stored under: the first long name.
    var key: String { names.first(where: { $0.hasPrefix("--") }) ?? names[0] }

    var takesValue: Bool { valueName != nil }

    /// How the usage line shows it: `[--port <port>]`, `--to <file>`.
    var usage: String {
        let text = valueName.map { "\(key) \($0)" } ?? key
        return required ? text : "[\(text)]"
    }

    /// The same option, completed with `completion`.
    func completing(_ completion: ValueCompletion) -> OptionSpec {
        var spec = self
        spec.completion = completion
        return spec
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
