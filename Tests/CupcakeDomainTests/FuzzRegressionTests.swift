import Foundation
import Testing

@testable import CupcakeDomain

/// Every input the fuzzer ever saved (fuzz/regressions) and its seed corpus (fuzz/corpus),
/// replayed through the invariants the fuzz target checks.
@Suite struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz")

    static var inputs: [String] {
        ["corpus", "regressions"].flatMap { folder in
            let directory = root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(folder)/\($0)" }
        }
    }

    @Test func thereAreInputsToReplay() {
        #expect(Self.inputs.count >= 5)
    }

    @Test(arguments: inputs)
    func savedInputsKeepEveryInvariant(_ name: String) throws {
        let bytes = Array(try Data(contentsOf: Self.root.appendingPathComponent(name)))
        #expect(OrderInvariants.violations(bytes).isEmpty)
    }
}
