import RelayProtocol
import Testing

@testable import RelayClient

/// `WATCHRELAY_REQUEST_TIMEOUT_S` and the request timeout a session runs with.
@Suite struct RelaySessionConfigurationTests {
    static func timeout(_ text: String) -> Double {
        RelaySessionConfiguration.requestTimeout(from: ["WATCHRELAY_REQUEST_TIMEOUT_S": text])
    }

    @Test(arguments: [("1e300", 86_400.0), ("86401", 86_400), ("1e-9", 0.001), ("2.5", 2.5), ("60", 60)])
    func theEnvironmentsTimeoutIsKeptWithinWhatTheCLIAccepts(text: String, seconds: Double) {
        #expect(Self.timeout(text) == seconds)
    }

    @Test(arguments: ["", "soon", "0", "-3", "inf", "nan"])
    func anUnusableTimeoutInTheEnvironmentMeansTheDefault(text: String) {
        #expect(Self.timeout(text) == 10)
    }

    /// `Int64(1e300 * 1000)` stopped the process: one set in code skips the parser.
    @Test(arguments: [(1e300, Duration.seconds(86_400)), (.infinity, .seconds(86_400)), (.nan, .seconds(10)), (0, .milliseconds(1))])
    func aTimeoutSetInCodeIsClampedToo(seconds: Double, expected: Duration) {
        let configuration = RelaySessionConfiguration(
            url: "ws://127.0.0.1:1/v1", role: .phone, deviceName: "Phone", stateDirectory: "/nonexistent",
            requestTimeoutSeconds: seconds)
        #expect(configuration.coreSettings().requestTimeout == expected)
    }
}
