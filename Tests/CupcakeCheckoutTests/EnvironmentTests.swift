import CupcakeCheckout
import Foundation
import Testing

/// The environment a command reads: the process's own, looked up by name, or a fixed set.
@Suite struct EnvironmentTests {
    @Test func theProcessVariantReadsEveryVariableThisProcessHas() {
        let variables = ProcessInfo.processInfo.environment
        #expect(!variables.isEmpty)
        for (name, value) in variables {
            #expect(Environment.process[name] == value, "\(name)")
        }
        let unset = "CUPCAKE_TEST_UNSET_\(UUID().uuidString.prefix(8))"
        #expect(variables[unset] == nil)
        #expect(Environment.process[unset] == nil)
        #expect(Environment.process.nonEmpty(unset) == nil)
    }

    @Test(
        arguments: [
            // (environment, name, value, nonEmpty)
            (["HOME": "/home/a"], "HOME", "/home/a", "/home/a"),
            (["HOME": "/home/a", "HOME": "/home/b"], "HOME", "/home/b", "/home/b"),
            (["HOME": ""], "HOME", "", nil),
            (["HOME": "/home/a"], "XDG_DATA_HOME", nil, nil),
            (["home": "/home/a"], "HOME", nil, nil),
            ([:], "PATH", nil, nil),
        ] as [(Environment, String, String?, String?)])
    func aFixedSetHasExactlyItsVariables(environment: Environment, name: String, value: String?, nonEmpty: String?) {
        #expect(environment[name] == value)
        #expect(environment.nonEmpty(name) == nonEmpty)
    }

    @Test func aDictionaryBecomesAFixedSet() {
        let environment = Environment(["XDG_CONFIG_HOME": "/tmp/c", "EMPTY": ""])
        #expect(environment["XDG_CONFIG_HOME"] == "/tmp/c")
        #expect(environment["EMPTY"] == "")
        #expect(environment.nonEmpty("EMPTY") == nil)
        #expect(environment["PATH"] == nil)
    }
}
