import CupcakeTestSupport
import Testing

@Suite struct CLIErrorTests {
    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var stdin: String? = nil
        var status: Int32
        var mentions: [String]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [ErrorCase] = [
        ErrorCase(arguments: ["price", "--qty", "2"], status: 65, mentions: ["quantity", "3 and 20"]),
        // A type the option does not take is a usage error, a number or a word alike.
        ErrorCase(arguments: ["price", "--type", "7"], status: 64, mentions: ["'--type <type>'", "0|vanilla"]),
        ErrorCase(arguments: ["price", "--type", "choclate"], status: 64, mentions: ["Did you mean 'chocolate'?"]),
        ErrorCase(arguments: ["orders", "list", "--sort", "nmae"], status: 64, mentions: ["Did you mean 'name'?"]),
        ErrorCase(arguments: ["orders", "lsit"], status: 64, mentions: ["Did you mean 'orders list'?"]),
        ErrorCase(arguments: ["--verison"], status: 64, mentions: ["Did you mean '--version'?"]),
        ErrorCase(
            arguments: ["orders", "list", "--sort", "--json"], status: 64,
            mentions: ["Missing value for '--sort <key>'", "'--sort=--json'"]),
        // A value that begins with "-" is a value when it is not one of the command's options.
        ErrorCase(
            arguments: ["orders", "list", "--sort", "-name", "--retries", "0", "--endpoint", "http://127.0.0.1:1/c"],
            status: 69, mentions: ["sort=-name"]),
        ErrorCase(
            arguments: ["price", "--qty", "abc"], status: 64,
            mentions: ["'--qty <n>'", "whole number", "cupcake price --help"]),
        ErrorCase(
            arguments: ["price", "--bogus"], status: 64, mentions: ["Unknown option '--bogus'", "Usage: cupcake price"]),
        ErrorCase(arguments: ["order", "--qyt", "4"], status: 64, mentions: ["Did you mean '--qty'?"]),
        ErrorCase(arguments: ["price", "--type", "mint"], status: 64, mentions: ["--type", "vanilla"]),
        ErrorCase(arguments: ["price", "--qty"], status: 64, mentions: ["Missing value for '--qty <n>'"]),
        ErrorCase(arguments: ["price", "--json=yes"], status: 64, mentions: ["does not take a value"]),
        ErrorCase(arguments: ["price", "extra"], status: 64, mentions: ["Unexpected argument 'extra'"]),
        ErrorCase(arguments: ["prise"], status: 64, mentions: ["Did you mean 'price'?"]),
        ErrorCase(arguments: [], status: 64, mentions: ["Missing subcommand", "SUBCOMMANDS"]),
        ErrorCase(arguments: ["price"], stdin: #"{"type":2,"quantity":3,"name":"  "}"#, status: 0, mentions: []),
        ErrorCase(
            arguments: ["order", "--dry-run"], stdin: #"{"type":2,"quantity":3,"name":"  "}"#, status: 65,
            mentions: ["name must not be blank", "zip"]),
        ErrorCase(
            arguments: ["price"], stdin: #"{"type":"two","quantity":3}"#, status: 65,
            mentions: ["type must be a whole number"]),
        ErrorCase(arguments: ["price"], stdin: "{\"type\": 2,\n \"quantity\": }", status: 65, mentions: ["line 2"]),
        ErrorCase(
            arguments: ["price", "--qty", "2", "--type", "9"], status: 64, mentions: ["'--type <type>'"]),
        ErrorCase(
            arguments: ["price", "--qty", "2", "--type", "3"], status: 65, mentions: ["quantity", "3 and 20"]),
    ]

    @Test(arguments: cases)
    func errorsGoToStderrWithTheirExitCode(_ c: ErrorCase) async {
        let io = TestConsole(stdin: c.stdin)
        let status = await io.run(c.arguments)
        #expect(status == c.status, "\(io.stderr)")
        for text in c.mentions {
            #expect(io.stderr.contains(text), "stderr: \(io.stderr)")
        }
        if c.status != 0 {
            #expect(io.stderr.hasPrefix("Error: ") || io.stderr.hasPrefix("OVERVIEW"))
            #expect(!io.stderr.contains("Fatal error"))
        }
        if c.arguments.first == "orders" && c.status == 64 {
            #expect(!io.stderr.contains("SUBCOMMANDS"), "a mistake gets its line, not the whole help")
        }
    }

    @Test(arguments: [["--version"], ["-V"], ["version"]])
    func theVersionIsOneLine(_ arguments: [String]) async {
        let io = TestConsole()
        #expect(await io.run(arguments) == 0)
        #expect(io.stdout.split(separator: "\n").count == 1)
        #expect(io.stdout.first?.isNumber == true, "\(io.stdout)")
    }
}
