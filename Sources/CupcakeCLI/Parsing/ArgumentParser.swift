/// Splits a command line into options, flags and positionals by a command's option specs,
/// in swift-argument-parser's manner: `--opt value` and `--opt=value`, `--` ends options, and an
/// unknown option gets a "did you mean".
enum ArgumentParser {
    /// Parses `arguments` (without the command words) against `options`.
    ///
    /// - Throws: a usage ``CLIError`` for an unknown option, a missing value, or a value given to
    ///   a flag.
    static func parse(
        _ arguments: [String], options: [OptionSpec], command: CommandPath
    ) throws(CLIError) -> ParsedArguments {
        var result = ParsedArguments(command: command)
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let spec = options.first(where: { $0.names.contains(name) }) else {
                var message = "Unknown option '\(name)'."
                if let suggestion = suggestion(for: name, among: options.flatMap(\.names)) {
                    message += " Did you mean '\(suggestion)'?"
                }
                throw .usage(message, command)
            }
            if spec.takesValue {
                if let inlineValue {
                    result.values.append((spec.key, inlineValue))
                } else if index < arguments.count, !isOption(arguments[index], among: options) {
                    // Anything but one of this command's options is the value, so `--sort -name`
                    // and `--qty -1` work as they read.
                    result.values.append((spec.key, arguments[index]))
                    index += 1
                } else {
                    var message = "Missing value for '\(name) \(spec.valueName ?? "<value>")'."
                    if index < arguments.count, arguments[index] != "--" {
                        message +=
                            " '\(arguments[index])' is an option here; to give it as the value, write "
                            + "'\(name)=\(arguments[index])'."
                    }
                    throw .usage(message, command)
                }
            } else {
                if inlineValue != nil {
                    throw .usage("The flag '\(name)' does not take a value.", command)
                }
                result.flags.append(spec.key)
            }
        }
        return result
    }

    /// Whether `text` is `--` or one of the command's own options (`--name` or `--name=value`),
    /// `-h` and `--help` included, rather than a value that happens to begin with "-".
    private static func isOption(_ text: String, among options: [OptionSpec]) -> Bool {
        if text == "--" || text == "-h" || text == "--help" { return true }
        guard text.hasPrefix("-"), text != "-" else { return false }
        let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
        return options.contains { $0.names.contains(name) }
    }

    /// The closest known name within an edit distance of two, if any.
    static func suggestion(for name: String, among names: [String]) -> String? {
        let scored = names.map { ($0, editDistance(name, $0)) }.filter { $0.1 <= 2 }
        return scored.min(by: { $0.1 < $1.1 })?.0
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    /// neighbours ("--qyt" for "--qty") each cost one.
    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
