import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

@Suite struct ConfigurationIntentTests {
    @Test func theIntentResolvesAgainstTheFavorites() {
        #expect(SelectedUserIntent().resolve(in: []) == .empty)
        #expect(SelectedUserIntent(login: "octocat").resolve(in: []) == .empty)
        #expect(SelectedUserIntent().resolve(in: Fx.three) == .rotate(Fx.three))
        #expect(
            SelectedUserIntent(login: "Gaearon").resolve(in: Fx.three)
                == .user(Fx.gaearon, position: 3, fellBack: false))
        #expect(
            SelectedUserIntent(login: "ghost").resolve(in: Fx.three) == .user(Fx.octocat, position: 1, fellBack: true))
    }

    @Test func aDeletedSelectionFallsBackToTheFirstFavorite() throws {
        var state = WatchAppState.standard(now: Fx.t0)
        state.receive(Fx.snapshot(1, Fx.three), sentAt: Fx.t0, now: Fx.t0)
        try state.configure("stack.rectangular", selecting: "torvalds", now: Fx.t0)
        var pass = state.flush(now: Fx.at(seconds: 1))
        #expect(state.widgets.widget("stack.rectangular")?.displayedEntry?.user == Fx.torvalds)
        let reasons = pass.reloads.first { $0.widgetID == "stack.rectangular" }?.reasons
        #expect(reasons == [.widgetAdded, .snapshotReceived, .configurationChanged])

        state.receive(Fx.snapshot(2, [Fx.gaearon, Fx.octocat]), sentAt: Fx.at(seconds: 10), now: Fx.at(seconds: 10))
        pass = state.flush(now: Fx.at(seconds: 11))
        let widget = try #require(state.widgets.widget("stack.rectangular"))
        #expect(widget.displayedEntry?.user == Fx.gaearon)
        #expect(widget.displayedEntry?.selectionFellBack == true)
        #expect(widget.content.lines == ["gaearon", "dan", "276 repos · 89k flw"])
        #expect(pass.reloads.count == 4)
    }

    @Test func configuringAnUnknownWidgetIsAnError() {
        var state = WatchAppState.standard(now: Fx.t0)
        #expect(throws: WatchAppError.unknownWidget("nope")) {
            try state.configure("nope", selecting: "x", now: Fx.t0)
        }
        var scheduler = WidgetScheduler()
        #expect(throws: WatchAppError.duplicateWidget("face.inline")) {
            try scheduler.add(.face(.accessoryInline), now: Fx.t0)
            try scheduler.add(.face(.accessoryInline), now: Fx.t0)
        }
    }

    @Test func noFavoritesIsAnEmptyStateInEveryFamily() {
        var state = WatchAppState.standard(now: Fx.t0)
        state.receive(Fx.snapshot(1, []), sentAt: Fx.t0, now: Fx.t0)
        _ = state.flush(now: Fx.t0)
        #expect(state.widgets.widgets.count == 4)
        for widget in state.widgets.widgets {
            #expect(widget.content.isEmpty, "\(widget.id)")
            #expect(!widget.content.isRedacted)
            for family in WidgetFamily.allCases { #expect(widget.content(as: family).isEmpty) }
        }
        #expect(state.widgets.widget("face.circular")?.content.lines == ["0"])
        #expect(state.widgets.widget("face.inline")?.content.lines == ["★ No favorites"])
    }
}
