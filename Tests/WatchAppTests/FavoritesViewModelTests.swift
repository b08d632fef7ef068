import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

@Suite struct FavoritesViewModelTests {
    @Test func aDeleteIsPendingUntilASnapshotWithoutTheUserArrives() {
        var vm = FavoritesViewModel()
        vm.receive(Fx.snapshot(1, Fx.three))
        let r1 = vm.delete("Torvalds")
        #expect(r1 == .favoritesDelete("torvalds"))
        #expect(vm.rows.map(\.isPendingDelete) == [false, true, false])
        #expect(vm.isPendingDelete("torvalds"))

        // A snapshot that still lists them: the delete is still in flight.
        let r2 = vm.receive(Fx.snapshot(2, Fx.three + [Fx.dongik]))
        #expect(r2)
        #expect(vm.pendingDeletes == ["torvalds"])
        #expect(vm.rows.map(\.isPendingDelete) == [false, true, false, false])

        let r3 = vm.receive(Fx.snapshot(3, [Fx.octocat, Fx.gaearon]))
        #expect(r3)
        #expect(vm.pendingDeletes.isEmpty)
        #expect(vm.rows.map(\.user.login) == ["octocat", "gaearon"])
        #expect(vm.rows.allSatisfy { !$0.isPendingDelete })
    }

    @Test func deletingAnUnknownOrPendingUserSendsNothing() {
        var vm = FavoritesViewModel(snapshot: Fx.snapshot(1, Fx.three))
        let r4 = vm.delete("ghost")
        #expect(r4 == nil)
        let r5 = vm.delete("octocat")
        #expect(r5 != nil)
        let r6 = vm.delete("OCTOCAT")
        #expect(r6 == nil)
        #expect(vm.pendingDeletes == ["octocat"])
    }

    @Test func anOlderSnapshotIsIgnoredAndKeepsThePendingMark() {
        var vm = FavoritesViewModel(snapshot: Fx.snapshot(5, Fx.three))
        _ = vm.delete("gaearon")
        let r7 = vm.receive(Fx.snapshot(4, [Fx.octocat]))
        #expect(!r7)
        let r8 = vm.receive(Fx.snapshot(5, [Fx.octocat]))
        #expect(!r8)
        #expect(vm.snapshot?.revision == 5)
        #expect(vm.pendingDeletes == ["gaearon"])
    }

    @Test func theWatchStateSendsTheDeleteAndTheWidgetsFollowTheNextSnapshot() {
        var state = WatchAppState.standard(now: Fx.t0)
        state.receive(Fx.snapshot(1, Fx.three), sentAt: Fx.t0, now: Fx.t0)
        _ = state.flush(now: Fx.t0)
        let r9 = state.delete("octocat")
        #expect(r9 == .favoritesDelete("octocat"))
        #expect(state.widgets.widgets.allSatisfy { $0.pending == nil })
        state.receive(Fx.snapshot(2, [Fx.torvalds, Fx.gaearon]), sentAt: Fx.at(seconds: 5), now: Fx.at(seconds: 6))
        _ = state.flush(now: Fx.at(seconds: 6))
        #expect(state.favorites.pendingDeletes.isEmpty)
        #expect(state.widgets.widget("face.circular")?.content.lines == ["2"])
        #expect(state.widgets.widget("stack.rectangular")?.content.lines.first == "torvalds")
    }
}
