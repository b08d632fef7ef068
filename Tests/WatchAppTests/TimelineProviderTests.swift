import GitExplorerPayloads
import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

@Suite struct TimelineProviderTests {
    let provider = FavoritesTimelineProvider()

    func context(
        _ family: WidgetFamily = .accessoryRectangular, _ users: [User] = Fx.three, selected: String? = nil
    ) -> FavoritesTimelineProvider.Context {
        .init(
            now: Fx.t0, family: family, favorites: users, revision: 4,
            configuration: SelectedUserIntent(login: selected))
    }

    @Test func rotatingEntriesAreAtLeastFiveMinutesApartAndWrapToTheFirstFavorite() {
        let timeline = provider.timeline(in: context())
        #expect(timeline.entries.map { $0.user?.login } == ["octocat", "torvalds", "gaearon", "octocat"])
        #expect(timeline.entries.map(\.position) == [1, 2, 3, 1])
        #expect(timeline.entries.first?.timestamp == Fx.t0)
        for (a, b) in zip(timeline.entries, timeline.entries.dropFirst()) {
            #expect(b.timestamp.millisecondsSinceEpoch - a.timestamp.millisecondsSinceEpoch >= 300_000)
        }
        #expect(timeline.entries.last?.timestamp == Fx.at(minutes: 45))
        #expect(timeline.policy == .atEnd)
        #expect(timeline.entries.allSatisfy { $0.revision == 4 && $0.favoritesCount == 3 })
    }

    @Test(arguments: [1, 60, 299])
    func spacingUnderFiveMinutesIsRaisedToFive(seconds: Int) {
        let p = FavoritesTimelineProvider(entrySpacing: .seconds(seconds))
        #expect(p.entrySpacing == .seconds(300))
        let dates = p.timeline(in: context()).entries.map(\.timestamp)
        #expect(dates == [Fx.t0, Fx.at(minutes: 5), Fx.at(minutes: 10), Fx.at(minutes: 15)])
    }

    @Test func thePolicyChoiceSetsTheRotatingTimelinesPolicy() {
        #expect(
            FavoritesTimelineProvider(policy: .after(.seconds(1200))).timeline(in: context()).policy
                == .after(Fx.at(minutes: 20)))
        #expect(FavoritesTimelineProvider(policy: .never).timeline(in: context()).policy == .never)
    }

    @Test func maxEntriesCapsTheRotationIncludingTheWrapEntry() {
        let users = (1...40).map { Fx.user("user\($0)") }
        let entries = FavoritesTimelineProvider(maxEntries: 5).timeline(in: context(.accessoryInline, users)).entries
        #expect(entries.map { $0.user?.login } == ["user1", "user2", "user3", "user4", "user1"])
        #expect(FavoritesTimelineProvider(maxEntries: 0).maxEntries == 2)
    }

    @Test func theCircularFamilyShowsTheCountInOneNeverEndingEntry() {
        let timeline = provider.timeline(in: context(.accessoryCircular))
        #expect(timeline.entries.map(\.content) == [.count])
        #expect(timeline.entries[0].favoritesCount == 3)
        #expect(timeline.policy == .never)
    }

    @Test func aConfiguredUserIsOneStaticEntry() {
        let timeline = provider.timeline(in: context(selected: "TORVALDS"))
        #expect(timeline.entries.count == 1)
        #expect(timeline.entries[0].user == Fx.torvalds)
        #expect(timeline.entries[0].position == 2)
        #expect(timeline.entries[0].selectionFellBack == false)
        #expect(timeline.policy == .never)
    }

    @Test func aSingleFavoriteDoesNotRotate() {
        let timeline = provider.timeline(in: context(.accessoryCorner, [Fx.octocat]))
        #expect(timeline.entries.map(\.user) == [Fx.octocat])
        #expect(timeline.policy == .never)
    }

    @Test(arguments: WidgetFamily.allCases)
    func noFavoritesIsTheEmptyEntry(family: WidgetFamily) {
        let timeline = provider.timeline(in: context(family, []))
        #expect(timeline.entries.map(\.content) == [.empty])
        #expect(timeline.policy == .never)
    }

    @Test func thePlaceholderIsRedactedAndSynchronous() {
        let entry = provider.placeholder(in: context())
        #expect(entry.isRedacted)
        #expect(entry.timestamp == Fx.t0)
        for family in WidgetFamily.allCases {
            #expect(WidgetContent(family: family, entry: entry).isRedacted)
        }
    }

    @Test func theSnapshotIsTheCurrentEntryOrSampleDataInTheGallery() {
        #expect(provider.snapshot(in: context()).user == Fx.octocat)
        var preview = context(.accessoryRectangular, [])
        preview.isPreview = true
        #expect(provider.snapshot(in: preview).user == FavoritesTimelineProvider.sampleUser)
        preview.isPreview = false
        #expect(provider.snapshot(in: preview).content == .empty)
    }

    @Test func theEntryOnScreenIsTheLastWhoseDateHasPassed() {
        let timeline = provider.timeline(in: context())
        #expect(timeline.index(at: Fx.at(seconds: -1)) == nil)
        #expect(timeline.index(at: Fx.at(minutes: 14)) == 0)
        #expect(timeline.index(at: Fx.at(minutes: 15)) == 1)
        #expect(timeline.index(at: Fx.at(hours: 9)) == 3)
    }

    /// A snapshot the phone cut to fit the relay's limit (`omitted`, PROTOCOL.md §12.2): the
    /// timeline rotates through the users it holds, and every entry counts the phone's list.
    @Test func aCutListRotatesThroughItsUsersAndCountsThePhonesFavorites() {
        var cut = context()
        cut.omitted = 9
        let timeline = provider.timeline(in: cut)
        #expect(timeline.entries.map { $0.user?.login } == ["octocat", "torvalds", "gaearon", "octocat"])
        #expect(timeline.entries.allSatisfy { $0.favoritesCount == 12 && $0.omitted == 9 })
        var circular = context(.accessoryCircular)
        circular.omitted = 9
        #expect(provider.timeline(in: circular).entries.map(\.favoritesCount) == [12])
    }

    /// A phone whose list did not fit with even one user: no user to show, not "no favorites".
    @Test func aListOfOnlyOmittedFavoritesShowsTheirCountNotTheEmptyState() {
        for family in WidgetFamily.favoritesFamilies {
            var none = context(family, [])
            none.omitted = 4
            let timeline = provider.timeline(in: none)
            #expect(timeline.entries.map(\.content) == [.count], "\(family)")
            #expect(timeline.entries.first?.favoritesCount == 4)
            none.isPreview = true
            #expect(provider.snapshot(in: none).content == .count, "the gallery shows them, not sample data")
        }
    }
}
