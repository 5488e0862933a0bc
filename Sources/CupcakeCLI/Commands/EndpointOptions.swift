import CupcakeCheckout

/// The options that pick and reach an endpoint, shared by `order` and `orders`.
package enum EndpointOptions {
    static let section = "ENDPOINT OPTIONS"

    package static let specs: [OptionSpec] = [
        .value(
            "--endpoint", valueName: "<url>", help: "Order endpoint (env CUPCAKE_ENDPOINT).",
            defaultValue: "http://127.0.0.1:8080/api/cupcakes", section: section),
        .value("--api-key", valueName: "<key>", help: "The app key (env CUPCAKE_API_KEY).", section: section),
        .value(
            "--api-key-file", valueName: "<path>", help: "Read the app key from a file (mode 0600).",
            section: section
        ).completing(.file),
        .value(
            "--staff-key", valueName: "<key>",
            help: "The shop's key, to list and change any order (env CUPCAKE_STAFF_KEY).",
            section: section),
        .value(
            "--staff-key-file", valueName: "<path>", help: "Read the shop's key from a file (mode 0600).",
            section: section
        ).completing(.file),
        .value(
            "--timeout", valueName: "<seconds>", help: "Deadline for each attempt; fractions allowed.",
            defaultValue: "10",
            section: section),
        .value(
            "--retries", valueName: "<n>", help: "Retries on connection failures, timeouts, 409, 429, 5xx.",
            defaultValue: "2", section: section),
        .value(
            "--config", valueName: "<path>", help: "Config file (env CUPCAKE_CONFIG).",
            defaultValue: "$XDG_CONFIG_HOME/cupcake/config.json", section: section
        ).completing(.file),
    ]

    /// The flags as given; resolved against environment and files when the command runs.
    package static func flags(_ arguments: ParsedArguments) throws(CLIError) -> CheckoutConfiguration.Flags {
        var flags = CheckoutConfiguration.Flags(
            endpoint: arguments.value("--endpoint"),
            apiKey: try key(arguments, "--api-key"),
            timeoutSeconds: try arguments.seconds("--timeout"),
            retries: try arguments.integer("--retries", in: 0...10),
            config: arguments.value("--config"), staffKey: try key(arguments, "--staff-key"))
        flags.keysOnCommandLine = ["--api-key", "--staff-key"].filter { arguments.value($0) != nil }
        return flags
    }

    /// A key from its flag or its file flag (`--api-key`, `--api-key-file`), not both.
    package static func key(_ arguments: ParsedArguments, _ flag: String) throws(CLIError) -> String? {
        let file = arguments.value(flag + "-file")
        if let given = arguments.value(flag) {
            guard file == nil else {
                throw .usage("Give '\(flag)' or '\(flag)-file', not both.", arguments.command)
            }
            return given
        }
        guard let file else { return nil }
        do {
            return try KeyFile.read(file)
        } catch {
            throw CLIError(.config, error.description)
        }
    }

    /// The warning for each key given as a flag, which other users can read.
    package static func keyWarnings(_ flags: [String]) -> [String] {
        flags.map { flag in
            KeyFile.flagWarning(
                flag, file: flag + "-file", environment: flag == "--api-key" ? "CUPCAKE_API_KEY" : "CUPCAKE_STAFF_KEY")
        }
    }

    package static func configuration(_ flags: CheckoutConfiguration.Flags, console: Console) throws(CLIError)
        -> CheckoutConfiguration
    {
        for warning in keyWarnings(flags.keysOnCommandLine) { console.printError(warning) }
        do {
            return try CheckoutConfiguration.resolve(
                flags: flags, environment: console.environment,
                userConfigDirectory: ConfigFiles.directory(environment: console.environment))
        } catch {
            throw cliError(error)
        }
    }

    /// The one mapping from checkout failures to exit codes.
    package static func cliError(_ error: CheckoutError) -> CLIError {
        switch error.code {
        case .unreachable: CLIError(.unavailable, error.message)
        case .temporary: CLIError(.temporary, error.message)
        case .unauthorized, .forbidden: CLIError(.permission, error.message)
        case .rejected: CLIError(.data, error.message)
        case .protocolError: CLIError(.protocol, error.message)
        case .configuration: CLIError(.config, error.message)
        case .notFound: CLIError(.notFound, error.message)
        case .refused: CLIError(.data, error.message)
        case .changed: CLIError(.temporary, error.message)
        }
    }
}
