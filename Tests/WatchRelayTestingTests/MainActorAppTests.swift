import Foundation
import Testing
import WatchRelayTesting

/// What the watch app shows: main-actor state, as an app target's view model is (Xcode 26's
/// default isolation makes every type of an app target main-actor).
@MainActor final class FavoritesScreen {
    var favorites: [String] = []
}

/// The watch app's connector: WCSession calls it on its own queue, so its methods are
/// `nonisolated` and hop to the main actor with what they got (Sendable values only).
final class ScreenConnector: NSObject, WCSessionDelegate, Sendable {
    let screen: FavoritesScreen
    init(screen: FavoritesScreen) { self.screen = screen }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {}

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        let favorites = applicationContext["favorites"] as? [String] ?? []
        Task { @MainActor in screen.favorites = favorites }
    }
}

/// A test on the main actor, as an app's tests are: it waits on main-actor state.
@MainActor @Suite struct MainActorAppTests {
    @Test func aMainActorTestWaitsOnWhatTheScreenShows() async throws {
        let scale = Double(ProcessInfo.processInfo.environment["WATCHRELAY_TIMEOUT_SCALE"] ?? "") ?? 1
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: 20 * scale)
        let screen = FavoritesScreen()
        let connector = ScreenConnector(screen: screen)
        let phoneSide = PhoneSide()
        let phone = link.makeSession(.phone)
        let watch = link.makeSession(.watch)
        phone.delegate = phoneSide
        watch.delegate = connector
        try await link.activate(phone)
        try await link.activate(watch)
        try phone.updateApplicationContext(["favorites": ["octocat"]])
        try await link.waitUntil("the watch shows the list", within: 20 * scale) { screen.favorites == ["octocat"] }
        await phone.close()
        await watch.close()
        await link.stop()
    }
}
