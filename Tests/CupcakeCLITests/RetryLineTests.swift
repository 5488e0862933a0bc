import Testing

@testable import CupcakeCLI

/// The wait a retry line shows ("retrying in 1.5 s…"), to one decimal place.
@Suite struct RetryLineTests {
    @Test(arguments: [
        (0.0, "0.0"), (0.04, "0.0"), (0.25, "0.3"), (1.5, "1.5"), (4.96, "5.0"), (60, "60.0"), (-1, "0.0"),
    ])
    func secondsToOneDecimalPlace(seconds: Double, text: String) {
        #expect(OrderCommand.tenths(seconds) == text)
    }
}
