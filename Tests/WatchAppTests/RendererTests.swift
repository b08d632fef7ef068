import Foundation
import GitExplorerPayloads
import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

/// Deterministic watch states for the renderers.
enum Scenes {
    static let now = Fx.at(minutes: 16)

    /// Four favorites, rotated once, one pending delete, a configured rectangular widget and
    /// the octocat profile loaded.
    static func populated() -> WatchAppState {
        var state = WatchAppState.standard(now: Fx.t0)
        state.receive(Fx.snapshot(7, [Fx.octocat, Fx.torvalds, Fx.gaearon, Fx.dongik]), sentAt: Fx.t0, now: Fx.t0)
        _ = state.flush(now: Fx.t0.adding(milliseconds: 100))
        try? state.configure("stack.rectangular", selecting: "dongik-song", now: Fx.at(minutes: 1))
        _ = state.flush(now: Fx.at(minutes: 1))
        _ = state.flush(now: now)
        _ = state.delete("gaearon")
        _ = state.openProfile("octocat")
        state.handleProfile(.replied(Fx.octocatRepos))
        return state
    }

    /// Budgets of one: the first timelines are free, the first snapshot spends the budget,
    /// the second is refused everywhere; the phone is away.
    static func stale() -> WatchAppState {
        let rules = WidgetRules(smartStackBudget: 1, watchFaceBudget: 1)
        var state = WatchAppState.standard(rules: rules, now: Fx.t0)
        _ = state.flush(now: Fx.t0)
        state.receive(Fx.snapshot(1, Fx.three), sentAt: Fx.at(minutes: 1), now: Fx.at(minutes: 1))
        _ = state.flush(now: Fx.at(minutes: 1))
        state.receive(Fx.snapshot(2, [Fx.dongik]), sentAt: Fx.at(minutes: 2), now: Fx.at(minutes: 2))
        _ = state.flush(now: Fx.at(minutes: 2))
        _ = state.openProfile("octocat")
        state.handleProfile(.replied(Fx.octocatRepos))
        _ = state.openProfile("octocat")
        state.handleProfile(.unreachable)
        _ = state.flush(now: now)
        return state
    }

    /// A snapshot with no favorites.
    static func empty() -> WatchAppState {
        var state = WatchAppState.standard(now: Fx.t0)
        state.receive(Fx.snapshot(1, []), sentAt: Fx.t0, now: Fx.t0)
        _ = state.flush(now: Fx.t0)
        _ = state.openProfile("ghost")
        state.handleProfile(.failed(ReposError(login: "ghost", code: .userNotFound, message: "Not Found")))
        return state
    }

    /// A list the phone cut to fit the relay's limit: three users of its twelve, one of them
    /// pending delete.
    static func partial() -> WatchAppState {
        var state = WatchAppState.standard(now: Fx.t0)
        state.receive(Fx.snapshot(3, Fx.three, omitted: 9), sentAt: Fx.t0, now: Fx.t0)
        _ = state.flush(now: Fx.t0)
        _ = state.delete("torvalds")
        _ = state.flush(now: now)
        return state
    }

    /// Just placed: nothing flushed yet, so every widget shows the placeholder.
    static func placeholder() -> WatchAppState {
        WatchAppState.standard(now: Fx.t0)
    }

    /// A snapshot of `users`, stored and flushed at `Fx.t0`.
    static func showing(_ users: [User]) -> WatchAppState {
        var state = WatchAppState.standard(now: Fx.t0)
        state.receive(Fx.snapshot(1, users), sentAt: Fx.t0, now: Fx.t0)
        _ = state.flush(now: Fx.t0)
        return state
    }

    static let names = ["populated", "stale", "empty", "placeholder", "partial"]

    static func make(_ name: String) -> WatchAppState {
        switch name {
        case "populated": populated()
        case "stale": stale()
        case "empty": empty()
        case "partial": partial()
        default: placeholder()
        }
    }
}

@Suite struct RendererTests {
    @Test(arguments: Scenes.names)
    func renderingsAreDeterministic(scene: String) {
        let a = Scenes.make(scene)
        let b = Scenes.make(scene)
        #expect(TextRenderer.render(a, now: Scenes.now) == TextRenderer.render(b, now: Scenes.now))
        #expect(JSONRenderer.render(a, now: Scenes.now) == JSONRenderer.render(a, now: Scenes.now))
        #expect(JSONRenderer.render(a, now: Scenes.now) == JSONRenderer.render(b, now: Scenes.now))
        #expect(SVGRenderer.render(a.widgets, now: Scenes.now) == SVGRenderer.render(b.widgets, now: Scenes.now))
        #expect(SVGRenderer.render(a.favorites) == SVGRenderer.render(b.favorites))
        if let pa = a.profile, let pb = b.profile {
            #expect(SVGRenderer.render(pa, now: Scenes.now) == SVGRenderer.render(pb, now: Scenes.now))
        }
    }

    @Test(arguments: Scenes.names)
    func textMatchesItsGoldenFile(scene: String) {
        let state = Scenes.make(scene)
        Golden.check(TextRenderer.render(state, now: Scenes.now), "\(scene).txt")
    }

    @Test(arguments: Scenes.names)
    func svgMatchesItsGoldenFile(scene: String) {
        let state = Scenes.make(scene)
        Golden.check(SVGRenderer.render(state.widgets, now: Scenes.now), "\(scene)-widgets.svg")
        Golden.check(SVGRenderer.render(state.favorites), "\(scene)-favorites.svg")
        if let profile = state.profile {
            Golden.check(SVGRenderer.render(profile, now: Scenes.now), "\(scene)-profile.svg")
        }
    }

    @Test func everyTextFrameLineIs28ColumnsWide() {
        for scene in Scenes.names {
            let text = TextRenderer.render(Scenes.make(scene), now: Scenes.now)
            for line in text.split(separator: "\n") where line.hasPrefix("│") || line.hasPrefix("╭") {
                #expect(TextMetrics.width(of: String(line)) == TextRenderer.frameWidth, "\(line)")
            }
        }
    }

    @Test func jsonCarriesEveryFamilyEntriesGenerationStalenessAndBudget() throws {
        let json = JSONRenderer.json(Scenes.stale(), now: Scenes.now)
        let widgets = try #require(json["widgets"]?["widgets"]?.arrayValue)
        #expect(widgets.count == 4)
        let rect = try #require(widgets.first { $0["id"]?.stringValue == "stack.rectangular" })
        #expect(rect["stale"] == .bool(true))
        #expect(rect["generation"] == .int(2))
        #expect(rect["budget"]?["left"] == .int(0))
        #expect(rect["budget"]?["limit"] == .int(1))
        #expect(rect["pending"]?["deferred"] == .bool(true))
        #expect(rect["families"]?.objectValue?.keys.sorted() == WidgetFamily.favoritesFamilies.map(\.rawValue).sorted())
        #expect(rect["entries"]?.arrayValue?.count == 4)
        // The first timeline rotates on: the widget kept its old entries (revision 1).
        #expect(rect["content"]?["lines"]?.arrayValue?.first == .string("torvalds"))
        #expect(rect["entries"]?.arrayValue?.allSatisfy { $0["revision"] == .int(1) } == true)
        #expect(json["profile"]?["stale"] == .bool(true))
        #expect(json["profile"]?["status"] == .string("Phone not reachable"))
        let bytes = Array(JSONRenderer.render(Scenes.stale(), now: Scenes.now).utf8)
        #expect(try JSONParser.parse(bytes) == json)
    }

    /// A list the phone answered stale shows as loaded, marked stale with the time it was
    /// fetched and GitHub's failure in words, in every rendering (`--json` says why).
    @Test func aStaleReplyRendersMarkedStaleWithItsFetchTime() throws {
        var state = WatchAppState.standard(now: Fx.t0)
        _ = state.openProfile("octocat")
        var reply = Fx.octocatRepos
        reply.fetchedAt = Fx.t0
        reply.stale = ReposStaleness(code: .githubUnavailable, message: "GitHub unavailable: HTTP 503")
        state.handleProfile(.replied(reply))
        let now = Fx.at(hours: 2)
        let profile = try #require(state.profile)

        let text = TextRenderer.render(profile, now: now)
        #expect(text.contains("octocat · loaded"), "\(text)")
        #expect(text.contains("GitHub is unavailable"), "\(text)")
        #expect(text.contains("⚠ stale · fetched 09:00"), "\(text)")
        #expect(text.contains("Spoon-Knife"), "\(text)")

        let json = JSONRenderer.json(profile, now: now)
        #expect(json["phase"] == .string("loaded"))
        #expect(json["stale"] == .bool(true))
        #expect(json["staleReason"] == .string("github_unavailable"))
        #expect(json["status"] == .string("GitHub is unavailable"))
        #expect(json["fetchedAt"] == .string(Fx.t0.iso8601))
        #expect(json["repos"]?.arrayValue?.count == 5)

        let svg = SVGRenderer.render(profile, now: now)
        #expect(svg.contains(">GitHub is unavailable</text>"), "\(svg)")
        #expect(svg.contains(">stale · fetched 09:00</text>"), "\(svg)")

        // A current list says none of it.
        _ = state.openProfile("octocat")
        state.handleProfile(.replied(Fx.octocatRepos))
        let current = try #require(state.profile)
        #expect(JSONRenderer.json(current, now: now)["staleReason"] == nil)
        #expect(JSONRenderer.json(current, now: now)["stale"] == .bool(false))
        #expect(!TextRenderer.render(current, now: now).contains("stale"))
    }

    /// A list the phone cut to fit the relay's limit (PROTOCOL.md §12.2): the counts are the
    /// phone's, and the list says it goes on on the phone, in every rendering.
    @Test func aCutListShowsThePhonesCountAndThatItGoesOnOnThePhone() throws {
        let state = Scenes.partial()
        let text = TextRenderer.render(state, now: Scenes.now)
        #expect(text.contains("( 12 )"), "\(text)")
        #expect(text.contains("│ +9 more on iPhone        │"), "\(text)")
        #expect(text.contains("octocat (1/12)"), "\(text)")

        let json = JSONRenderer.json(state, now: Scenes.now)
        #expect(json["favorites"]?["omitted"] == .int(9))
        #expect(json["favorites"]?["total"] == .int(12))
        #expect(json["favorites"]?["users"]?.arrayValue?.count == 3)
        let widgets = try #require(json["widgets"]?["widgets"]?.arrayValue)
        let circular = try #require(widgets.first { $0["id"]?.stringValue == "face.circular" })
        #expect(circular["content"]?["lines"] == .array([.string("12")]))
        let entry = try #require(circular["entries"]?.arrayValue?.first)
        #expect(entry["favoritesCount"] == .int(12))
        #expect(entry["omitted"] == .int(9))

        let svg = SVGRenderer.render(state.favorites)
        #expect(svg.contains(">+9 more on iPhone</text>"), "\(svg)")
        #expect(SVGRenderer.render(state.widgets, now: Scenes.now).contains(">12</text>"))

        // A whole list says none of it.
        let whole = Scenes.showing(Fx.three)
        #expect(JSONRenderer.json(whole, now: Fx.t0)["favorites"]?["omitted"] == .int(0))
        #expect(!TextRenderer.render(whole, now: Fx.t0).contains("iPhone"))
        #expect(!SVGRenderer.render(whole.favorites).contains("iPhone"))
    }

    @Test func eventsHaveAJSONForm() {
        var s = WidgetScheduler(widgets: [.face(.accessoryCircular)], now: Fx.t0)
        let events = s.flush(now: Fx.t0, favorites: Fx.snapshot(1, Fx.three)).events
        let forms = events.map { JSONRenderer.json($0) }
        #expect(forms.map { $0["type"] } == [.string("reloaded"), .string("rendered")])
        #expect(forms[0]["reason"] == .string("widgetAdded"))
        #expect(forms[0]["latencyMs"] == nil)
        #expect(forms[1]["content"]?["lines"] == .array([.string("3")]))
    }

    @Test func svgEscapesMarkupInUserText() {
        let evil = Fx.user("a<b>&\"c'", name: "<script>")
        let svg = SVGRenderer.render(Scenes.showing([evil]).widgets, now: Fx.t0)
        #expect(!svg.contains("<b>"))
        #expect(!svg.contains("<script>"))
        #expect(svg.contains("a&lt;b&gt;&amp;&quot;c&apos;"))
        var profile = ProfileDetail(login: "x")
        profile.handle(.requested)
        profile.handle(
            .replied(ReposReply(login: "x", repos: [Fx.repo("<&>\u{1}", stars: 1, updated: "bad")], fetchedAt: Fx.t0)))
        let list = SVGRenderer.render(profile, now: Fx.t0)
        #expect(list.contains("&lt;&amp;&gt;</text>"))
        #expect(!list.contains("\u{1}"))
    }

    @Test func textFramesStayWholeWhenPeerTextCarriesControlCharacters() {
        // A login, a name or a repo from the phone with a newline, a carriage return or a
        // terminal escape must neither break the 28-column frames nor reach the terminal.
        let evil = Fx.user("a\nb\u{1B}[2J", name: "x\r\ny\u{7}\u{9B}")
        var state = Scenes.showing([evil, Fx.octocat])
        _ = state.openProfile(evil.login)
        state.handleProfile(
            .replied(
                ReposReply(
                    login: evil.login, repos: [Fx.repo("r\u{1B}]0;pwned\u{7}", stars: 1, updated: "\n\t")],
                    fetchedAt: Fx.t0)))
        let text = TextRenderer.render(state, now: Fx.t0)
        let controls = text.unicodeScalars.filter { $0 != "\n" && $0.properties.generalCategory == .control }
        #expect(controls.isEmpty, "\(controls.map { String($0.value, radix: 16) })")
        for line in text.split(separator: "\n") where line.contains("│") || line.contains("╮") || line.contains("╯") {
            #expect(TextMetrics.width(of: String(line)) == TextRenderer.frameWidth, "\(line)")
        }
    }

    @Test func svgDropsTheNoncharactersXMLForbids() {
        // XML 1.0 allows neither U+FFFE nor U+FFFF, even escaped: one in a name made the whole
        // picture an XML parse error.
        let odd = Fx.user("odd", name: "a\u{FFFE}b\u{FFFF}c")
        let svg = SVGRenderer.render(Scenes.showing([odd]).widgets, now: Fx.t0)
        #expect(svg.contains(">abc</text>"))
        #expect(!svg.unicodeScalars.contains { $0.value == 0xFFFE || $0.value == 0xFFFF })
    }

    @Test func svgNumbersHaveAtMostOneDecimal() {
        #expect(SVGWriter.number(12) == "12")
        #expect(SVGWriter.number(12.46) == "12.5")
        #expect(SVGWriter.number(-0.04) == "0")
        #expect(SVGWriter.number(-3.25) == "-3.3")
    }
}
