/// What the parser found on a command line: option values, flags and positional arguments.
package struct ParsedArguments: Sendable {
    /// The values given to options, by key (`--qty`), in the order given; the last one counts.
    /// (A list, not a dictionary: a command line holds a handful, and hashing strings would cost a
    /// one-shot command the Swift runtime's first lookup of `String: Hashable` at start-up.)
    var values: [(key: String, value: String)] = []
    /// The flags given, by key.
    var flags: [String] = []
    /// Positional arguments, in order (`-` included).
    var positionals: [String] = []
    /// The command the arguments belong to, for error messages.
    package var command: CommandPath

    /// Whether a flag was given.
    package func has(_ key: String) -> Bool { flags.contains(key) }

    /// The value of an option, if given.
    package func value(_ key: String) -> String? { values.last { $0.key == key }?.value }

    /// The value of an option parsed as an integer in a range.
    package func integer(_ key: String, in range: ClosedRange<Int>? = nil) throws(CLIError) -> Int? {
        guard let text = value(key) else { return nil }
        guard let number = Int(text) else {
            throw .usage("The value '\(text)' is invalid for '\(key) <n>': expected a whole number.", command)
        }
        if let range, !range.contains(number) {
            throw .usage(
                "The value '\(text)' is invalid for '\(key) <n>': expected \(range.lowerBound)...\(range.upperBound).",
                command
            )
        }
        return number
    }

    /// The value of an option parsed as a non-negative number of seconds, fractions allowed.
    package func seconds(_ key: String) throws(CLIError) -> Double? {
        guard let text = value(key) else { return nil }
        guard let number = Double(text), number.isFinite, number > 0 else {
            throw .usage("The value '\(text)' is invalid for '\(key) <seconds>': expected a positive number.", command)
        }
        return number
    }

    /// Fails when there are positional arguments other than those allowed.
    package func expectNoPositionals(allowing allowed: [String] = []) throws(CLIError) {
        if let extra = positionals.first(where: { !allowed.contains($0) }) {
            throw .usage("Unexpected argument '\(extra)'.", command)
        }
    }
}
