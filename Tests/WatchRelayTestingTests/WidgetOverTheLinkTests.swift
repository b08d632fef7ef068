import Foundation
import Testing
import WatchRelayTesting
import WidgetKit

// The seed's bug as an app's own test would catch it: the phone changes the favorites, the
// watch app stores what arrives through the real relay, and the complication must show it.
// Written as an app's test: the product modules only.

/// The store the watch app and its widget share (an App Group on a device).
final class SharedFavorites: @unchecked Sendable {
    private let lock = NSLock()
    private var logins: [String] = []
    var favorites: [String] {
        lock.lock()
        defer { lock.unlock() }
        return logins
    }
    func save(_ new: [String]) {
        lock.lock()
        logins = new
        lock.unlock()
    }
}

struct FavoritesEntry: TimelineEntry, Sendable {
    let date: Date
    let count: Int
}

struct FavoritesProvider: TimelineProvider {
    /// A kind no other test's host has: a reload from WatchConnectivity's queue finds its host by it.
    static let kind = "WatchRelayTestLinkFavorites"
    let store: SharedFavorites
    func placeholder(in context: Context) -> FavoritesEntry { FavoritesEntry(date: Date(), count: 0) }
    func getSnapshot(in context: Context, completion: @escaping (FavoritesEntry) -> Void) {
        completion(FavoritesEntry(date: Date(), count: store.favorites.count))
    }
    func getTimeline(in context: Context, completion: @escaping (Timeline<FavoritesEntry>) -> Void) {
        completion(Timeline(entries: [FavoritesEntry(date: Date(), count: store.favorites.count)], policy: .never))
    }
}

/// The watch app's connector: stores the phone's list and, when `reloads`, asks WidgetKit for
/// a new timeline (the fix); without it the complication keeps the old count (the bug).
final class WatchFavorites: NSObject, WCSessionDelegate, @unchecked Sendable {
    let store: SharedFavorites
    let reloads: Bool
    private let lock = NSLock()
    private var received = 0
    var contextsReceived: Int {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    init(store: SharedFavorites, reloads: Bool) {
        self.store = store
        self.reloads = reloads
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {}

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        store.save(applicationContext["favorites"] as? [String] ?? [])
        if reloads { WidgetCenter.shared.reloadTimelines(ofKind: FavoritesProvider.kind) }
        lock.lock()
        received += 1
        lock.unlock()
    }
}

/// The phone's side needs only a delegate that accepts activation.
final class PhoneSide: NSObject, WCSessionDelegate, @unchecked Sendable {
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {}
    func sessionDidBecomeInactive(_ session: WCSession) {}
    func sessionDidDeactivate(_ session: WCSession) {}
}

// The two cases one after the other: their hosts have one kind, so a reload from the session's
// queue could not tell them apart (README, "Test your own widget").
@Suite(.serialized) struct WidgetOverTheLinkTests {
    /// The phone's change at 09:00 reaches the complication within a minute only when the watch
    /// app reloads its timeline after storing the list.
    @Test(arguments: [true, false])
    func theComplicationShowsThePhonesChange(watchReloads: Bool) async throws {
        let wait = 20 * (Double(ProcessInfo.processInfo.environment["WATCHRELAY_TIMEOUT_SCALE"] ?? "") ?? 1)
        let link = try await WatchRelayTestLink.start(requestTimeoutSeconds: wait)
        let phoneSide = PhoneSide()
        let store = SharedFavorites()
        let watchApp = WatchFavorites(store: store, reloads: watchReloads)
        let phone = link.makeSession(.phone)
        let watch = link.makeSession(.watch)
        phone.delegate = phoneSide
        watch.delegate = watchApp
        try await link.activate(phone)
        try await link.activate(watch)

        let host = WidgetHost(kind: FavoritesProvider.kind, provider: FavoritesProvider(store: store))
        host.place(.accessoryRectangular)
        host.at(hours: 9, "the phone adds two favorites") {
            try? phone.updateApplicationContext(["favorites": ["octocat", "torvalds"]])
            // The event lasts until the watch app handled the context, so its reload counts at 09:00.
            try? await link.waitUntil("the watch app stored the list", within: wait) { watchApp.contextsReceived == 1 }
        }
        let day = await host.run()
        #expect(watchApp.contextsReceived == 1)
        let shown = Result { try day.expectShown(.accessoryRectangular, within: 60, of: host.date(hours: 9)) { $0.count == 2 } }
        if watchReloads {
            _ = try shown.get()
            try day.expectNoRefusedReloads()
        } else {
            #expect(throws: (any Error).self) { _ = try shown.get() }
        }

        await phone.close()
        await watch.close()
        await link.stop()
    }
}
