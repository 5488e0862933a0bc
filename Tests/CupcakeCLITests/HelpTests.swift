import CupcakeDomain
import CupcakeTestSupport
import Testing

@Suite struct HelpTests {
    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func rootHelpListsTheSubcommands(_ arguments: [String]) async {
        let io = TestConsole()
        #expect(await io.run(arguments) == 0)
        #expect(io.stdout.contains("OVERVIEW:"))
        #expect(io.stdout.contains("SUBCOMMANDS:"))
        #expect(io.stdout.contains("price"))
        #expect(io.stderr.isEmpty)
    }

    @Test(arguments: [["help", "order"], ["order", "--help"], ["order", "-h"], ["order", "--qty", "4", "--help"]])
    func commandHelpIsTheSameEveryWay(_ arguments: [String]) async {
        let reference = TestConsole()
        _ = await reference.run(["help", "order"])
        let io = TestConsole()
        #expect(await io.run(arguments) == 0)
        #expect(io.stdout == reference.stdout)
        #expect(io.stdout.contains("USAGE: cupcake order"))
        #expect(io.stdout.contains("ORDER OPTIONS:"))
        #expect(io.stdout.contains("--qty, --quantity <n>"))
        #expect(io.stdout.contains("(default: 3)"))
    }

    @Test func versionIsBare() async {
        let io = TestConsole()
        #expect(await io.run(["--version"]) == 0)
        #expect(io.stdout == Cupcake.version + "\n")
    }
}
