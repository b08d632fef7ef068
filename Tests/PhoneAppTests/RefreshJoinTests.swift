import Foundation
import GitHubAPI
@testable import PhoneApp
import TestSupport
import Testing

/// A refresh asked for while another runs joins it; one asked for once that one is over fetches.
@Suite(.timeLimit(.minutes(5)))
struct RefreshJoinTests {
    /// `refreshInFlight` was cleared by the first caller after it resumed, not by the refresh:
    /// a manual refresh that reached the actor between the periodic refresh's end and that
    /// resumption joined the finished refresh, took the throttle's window and returned the old
    /// result without asking GitHub.
    ///
    /// The manual refresh is asked for from the errors stream, when the periodic refresh
    /// reports a failed login: that report is made inside the refresh's last step on the actor
    /// (storing the results; nothing changed, so no push follows and the refresh does not
    /// suspend again), so the request reaches the actor while the refresh is ending, after
    /// every GitHub request of it has been answered. It must fetch again.
    @Test func aRefreshAskedForAfterTheRunningOneFetchedAsksGitHubAgain() async throws {
        // No throttle: each round's manual refresh is the first of its window.
        let h = try await PhoneHarness.start { $0.refreshThrottle = .zero }
        let logins = h.github.server.catalog.logins
        let failing = Array(logins.prefix(4))
        for login in failing + logins.dropFirst(4) { _ = try await h.phone.add(login) }
        _ = await h.phone.refresh(trigger: .periodic)
        var errors = h.phone.errors.makeAsyncIterator()
        for login in failing {
            h.github.server.clearFaults()
            h.github.server.setFault(.down, for: login)
            let server = h.github.server
            let phone = h.phone
            async let periodic = phone.refresh(trigger: .periodic)
            // The failure of this round's login (earlier rounds' reports are skipped).
            while let error = await errors.next() {
                if case .github(login, _) = error { break }
            }
            let before = server.counters.requests
            let manual = await phone.refresh()
            let after = server.counters.requests
            _ = await periodic
            #expect(after > before, "round \(login): \(manual) without a request")
            guard after > before else { break }
        }
        await h.stop()
    }
}
