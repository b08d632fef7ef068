import PhoneApp
import RelayClient
import RelayProtocol
import Testing

/// The phone and the watch name a session error with one code (`RelaySessionError.code`): a
/// script reading both saw a reply timeout as `relay_error` from the phone and `reply_timeout`
/// from the watch, and four more errors the same way.
@Suite struct SessionErrorCodeTests {
    static let errors: [RelaySessionError] = [
        .notActivated, .notPaired, .notReachable, .replyTimeout, .payloadTooLarge(size: 2, limit: 1),
        .payloadTooDeep(depth: 2, limit: 1), .notSupported("x"), .disconnected, .timeout("x"),
        .relay(code: .quotaExceeded, message: "x"), .persistFailed("x"),
    ]

    @Test func thePhoneNamesEverySessionErrorAsTheWatchDoes() {
        for error in Self.errors {
            #expect(PhoneError.relay(error).code == error.code, "\(error)")
        }
        #expect(Self.errors.map { PhoneError.relay($0).code }.filter { $0 == "relay_error" }.isEmpty)
        #expect(PhoneError.relay(.replyTimeout).code == "reply_timeout")
        #expect(PhoneError.relay(.relay(code: .quotaExceeded, message: "x")).code == "quota_exceeded")
    }
}
