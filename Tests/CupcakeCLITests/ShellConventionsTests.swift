import CupcakeCLI
import CupcakeDomain
import CupcakeTestSupport
import Foundation
import Testing

/// `cupcake completion bash|zsh|fish` and the manual page, checked against the parser's own
/// tables and by the shells and groff themselves.
@Suite struct ShellConventionsTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func output(_ arguments: [String]) throws -> String {
        let result = try ProcessRunner.cupcake(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test func everyCommandAndOptionIsInTheCompletionsAndTheManualPage() throws {
        let scripts = try CommandTree.shells.map { try Self.output(["completion", $0]) }
        let manual = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/cupcake.1"), encoding: .utf8)
        for command in CommandLineTool.commands {
            for word in command.path {
                for script in scripts { #expect(script.contains(word), "\(word) missing") }
            }
            #expect(manual.contains(".SS \"cupcake \(command.path.joined(separator: " "))"), "\(command.path)")
            for option in CommandTree.options(of: command) {
                for name in option.names {
                    // bash and zsh spell options out; fish as -l name or -s letter.
                    #expect(scripts[0].contains(name), "bash lacks \(name) of \(command.path)")
                    #expect(scripts[1].contains("'\(name):"), "zsh lacks \(name) of \(command.path)")
                    let fish = name.hasPrefix("--") ? "-l \(name.dropFirst(2))" : "-s \(name.dropFirst())"
                    #expect(scripts[2].contains(fish), "fish lacks \(name) of \(command.path)")
                    #expect(manual.contains(name.replacingOccurrences(of: "-", with: "\\-")), "man lacks \(name)")
                }
            }
        }
    }

    /// `cupcake`'s own options, as its help lists them, are offered by every shell at the top.
    @Test func everyOptionTheRootHelpListsIsCompletedAtTheTop() throws {
        let help = try Self.output(["--help"])
        let section = help.components(separatedBy: "OPTIONS:")[1].components(separatedBy: "SUBCOMMANDS:")[0]
        let names = section.split(separator: "\n").flatMap { line in
            line.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
                .filter { $0.hasPrefix("-") }
        }
        #expect(Set(names) == ["-V", "--version", "-h", "--help"], "\(names)")
        let scripts = try CommandTree.shells.map { try Self.output(["completion", $0]) }
        for name in names {
            #expect(
                try Self.bashOffered("cupcake \(name.hasPrefix("--") ? "--" : "-")").contains(name), "bash: \(name)")
            #expect(scripts[1].contains("'\(name):"), "zsh lacks \(name)")
            #expect(try Self.fishOffered("cupcake -").contains(name), "fish: \(name)")
        }
    }

    static func bashOffered(_ line: String) throws -> Set<String> {
        let script = try Self.output(["completion", "bash"])
        let directory = try TemporaryDirectory()
        let file = directory.path("cupcake.bash")
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        if line.hasSuffix(" ") { words.append("") }
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program =
            "source '\(file)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _cupcake; printf '%s\\n' \"${COMPREPLY[@]}\""
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", program])
        return Set(result.stdout.split(separator: "\n").map(String.init))
    }

    static func fishOffered(_ line: String) throws -> Set<String> {
        let script = try Self.output(["completion", "fish"])
        let directory = try TemporaryDirectory()
        let file = directory.path("cupcake.fish")
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/fish"), ["--no-config", "-c", "source '\(file)'; complete -C '\(line)'"])
        #expect(result.status == 0, "\(result.stderr)")
        return Set(result.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) })
    }

    @Test func theManualPageInDocsIsCurrentAndRendersCleanly() throws {
        let generated = try Self.output(["help", "--man"])
        let file = Self.packageRoot.appendingPathComponent("docs/cupcake.1")
        let kept = try String(contentsOf: file, encoding: .utf8)
        #expect(kept == generated, "docs/cupcake.1 is stale: run .build/debug/cupcake help --man > docs/cupcake.1")
        let groff = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/groff"), ["-man", "-Tutf8", "-ww", "-z", file.path])
        #expect(groff.status == 0)
        #expect(groff.stderr.isEmpty, "\(groff.stderr)")
    }

    struct Completion: Sendable, CustomTestStringConvertible {
        var line: String
        var offers: [String]
        var notOffers: [String] = []
        var testDescription: String { "'\(line)'" }
    }

    static let completions: [Completion] = [
        Completion(line: "cupcake ", offers: ["price", "order", "orders", "serve", "completion"]),
        Completion(line: "cupcake ord", offers: ["order", "orders"], notOffers: ["price"]),
        Completion(line: "cupcake orders ", offers: ["list", "show", "favorite", "cancel"], notOffers: ["set"]),
        Completion(line: "cupcake address s", offers: ["set", "show"], notOffers: ["clear"]),
        Completion(line: "cupcake order --type ch", offers: ["chocolate"], notOffers: ["vanilla"]),
        Completion(
            line: "cupcake orders list --sort ", offers: ["createdAt", "-createdAt", "-name", "-cost", "-type"]),
        Completion(line: "cupcake price --fr", offers: ["--frosting"]),
        Completion(line: "cupcake serve --durability ", offers: ["process", "full"]),
        Completion(line: "cupcake completion ", offers: ["bash", "zsh", "fish"]),
        Completion(line: "cupcake orders cancel 12 --", offers: ["--yes", "--endpoint", "--help"]),
    ]

    /// bash: the script's function, called as bash's completion would.
    @Test(arguments: completions) func bashOffers(_ example: Completion) throws {
        let offered = try Self.bashOffered(example.line)
        for word in example.offers { #expect(offered.contains(word), "\(offered)") }
        for word in example.notOffers { #expect(!offered.contains(word), "\(offered)") }
    }

    /// fish: its own `complete -C`, which asks the loaded completions what they offer.
    @Test(arguments: completions) func fishOffers(_ example: Completion) throws {
        let offered = try Self.fishOffered(example.line)
        for word in example.offers { #expect(offered.contains(word), "\(offered)") }
        for word in example.notOffers { #expect(!offered.contains(word), "\(offered)") }
    }

    @Test func zshReadsItsScript() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("_cupcake")
        try Self.output(["completion", "zsh"]).write(toFile: file, atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/zsh"), ["-n", file])
        #expect(result.status == 0, "\(result.stderr)")
        // Loaded in an interactive zsh with its completion system, it registers for cupcake.
        let loaded = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/zsh"),
            [
                "-f", "-c",
                "autoload -Uz compinit && compinit -u -D && source '\(file)' && print -r -- $_comps[cupcake]",
            ],
            environment: ["HOME": directory.path("")])
        #expect(loaded.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "_cupcake", "\(loaded.stderr)")
    }

    @Test func anUnknownShellIsAUsageErrorWithASuggestion() throws {
        let result = try ProcessRunner.cupcake(["completion", "bsh"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("Did you mean 'bash'?"), "\(result.stderr)")
    }
}
