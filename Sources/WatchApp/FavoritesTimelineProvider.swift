import GitExplorerPayloads
import RelayProtocol
import WidgetKit

/// The `favorites` widget's timeline provider: `placeholder`, `snapshot` and `timeline`, as
/// WidgetKit's `AppIntentTimelineProvider` defines them, over the favorites the watch stored.
///
/// Timelines:
/// - **Rotating** (a user-showing family, no selected user, two or more favorites): one
///   entry per favorite, ``entrySpacing`` apart (never under 5 minutes), in the phone's
///   order, then one more entry showing the first favorite again, so the last favorite is on
///   screen for a full interval before `.atEnd` fires and the next timeline starts where this
///   one wrapped. At most ``maxEntries`` entries (favorites past that are not shown).
///   The policy is ``policy``.
/// - **Static** (the circular count, the configured user, a single favorite, or no
///   favorites): one entry and `.never`. Its content cannot change without new data, and
///   new data (a snapshot, a configuration change) always requests a reload.
///
/// A snapshot cut to fit the relay's limit (`omitted`, PROTOCOL.md §12.2) rotates through the
/// users it holds; every entry counts the phone's favorites (``FavoritesEntry/favoritesCount``
/// includes the omitted ones), and with no user at all a user-showing family shows that count.
public struct FavoritesTimelineProvider: Sendable, Hashable {
    /// How a rotating timeline asks for the next one.
    public enum PolicyChoice: Sendable, Hashable {
        /// `.atEnd`: when the last (wrap-around) entry's date passes.
        case atEnd
        /// `.after(now + interval)`.
        case after(Duration)
        /// `.never`: only an explicit reload.
        case never
    }

    /// What the provider is asked about: WidgetKit's `TimelineProviderContext` plus the
    /// intent and the stored favorites (the provider reads storage, never the network).
    public struct Context: Sendable, Hashable {
        /// The reload time: the first entry's date.
        public var now: Timestamp
        /// The family of the widget asking.
        public var family: WidgetFamily
        /// The stored favorites, in the phone's order.
        public var favorites: [User]
        /// The favorites the phone left out after ``favorites`` (the snapshot's `omitted`):
        /// counted in every entry's ``FavoritesEntry/favoritesCount``, never shown as users.
        public var omitted: Int
        /// The stored snapshot's revision; `nil` before any snapshot.
        public var revision: Int64?
        /// The widget instance's configuration intent.
        public var configuration: SelectedUserIntent
        /// True in the widget gallery: answer fast, with sample data if there is none.
        public var isPreview: Bool

        /// A context at `now` for `family` over the stored `favorites`.
        public init(
            now: Timestamp, family: WidgetFamily, favorites: [User] = [], omitted: Int = 0, revision: Int64? = nil,
            configuration: SelectedUserIntent = .init(), isPreview: Bool = false
        ) {
            self.now = now
            self.family = family
            self.favorites = favorites
            self.omitted = max(omitted, 0)
            self.revision = revision
            self.configuration = configuration
            self.isPreview = isPreview
        }
    }

    /// WidgetKit's documented floor for the gap between entries.
    public static let minimumEntrySpacing: Duration = .seconds(300)

    /// The gap between rotating entries; values under ``minimumEntrySpacing`` are raised to it.
    public var entrySpacing: Duration {
        didSet { entrySpacing = max(entrySpacing, Self.minimumEntrySpacing) }
    }
    /// The most entries in one timeline, including the wrap-around entry (at least 2).
    public var maxEntries: Int {
        didSet { maxEntries = max(maxEntries, 2) }
    }
    /// The policy of rotating timelines.
    public var policy: PolicyChoice

    /// A provider with the given spacing (raised to 5 minutes at least), cap and policy.
    public init(entrySpacing: Duration = .seconds(900), maxEntries: Int = 25, policy: PolicyChoice = .atEnd) {
        self.entrySpacing = max(entrySpacing, Self.minimumEntrySpacing)
        self.maxEntries = max(maxEntries, 2)
        self.policy = policy
    }

    /// The sample user the gallery preview shows when there are no favorites yet.
    public static let sampleUser = User(
        login: "octocat", id: 583_231, name: "The Octocat", avatarURL: "https://avatars.githubusercontent.com/u/583231",
        htmlURL: "https://github.com/octocat", publicRepos: 8, followers: 3938, following: 9)

    /// The placeholder entry: synchronous, rendered redacted.
    public func placeholder(in context: Context) -> FavoritesEntry {
        FavoritesEntry(date: context.now, content: .placeholder, favoritesCount: 0)
    }

    /// The entry for a transient appearance: the timeline's current entry, or sample data in
    /// the gallery when there are no favorites.
    public func snapshot(in context: Context) -> FavoritesEntry {
        if context.isPreview, context.favorites.isEmpty, context.omitted == 0 {
            let content: FavoritesEntry.Content = context.family.showsUser ? .user(Self.sampleUser) : .count
            return FavoritesEntry(date: context.now, content: content, favoritesCount: 1, position: 1)
        }
        return timeline(in: context).entries[0]
    }

    /// The timeline from `context.now` on (always at least one entry, the first dated `now`).
    public func timeline(in context: Context) -> WidgetTimeline {
        let now = context.now
        // The phone's count: a list cut to fit the relay's limit still counts what it left out.
        let count = context.favorites.count + context.omitted
        let omitted = context.omitted
        let revision = context.revision
        func single(_ content: FavoritesEntry.Content, position: Int? = nil, fellBack: Bool = false) -> WidgetTimeline {
            let entry = FavoritesEntry(
                date: now, content: content, favoritesCount: count, omitted: omitted, position: position,
                revision: revision, selectionFellBack: fellBack)
            return WidgetTimeline(entries: [entry], policy: .never)
        }
        guard count > 0 else { return single(.empty) }
        // No user to show (the phone's list did not fit with even one): its count.
        guard context.family.showsUser, !context.favorites.isEmpty else { return single(.count) }
        switch context.configuration.resolve(in: context.favorites) {
        case .empty:
            return single(.empty)
        case .user(let user, let position, let fellBack):
            return single(.user(user), position: position, fellBack: fellBack)
        case .rotate(let users) where users.count == 1:
            return single(.user(users[0]), position: 1)
        case .rotate(let users):
            let shown = min(users.count, maxEntries - 1)
            var entries: [FavoritesEntry] = []
            for k in 0...shown {
                let i = k % shown
                entries.append(
                    FavoritesEntry(
                        date: now.adding(milliseconds: Int64(k) * TimeMath.milliseconds(entrySpacing)),
                        content: .user(users[i]), favoritesCount: count, omitted: omitted, position: i + 1,
                        revision: revision))
            }
            let policy: ReloadPolicy =
                switch self.policy {
                case .atEnd: .atEnd
                case .after(let d): .after(TimeMath.add(now, d))
                case .never: .never
                }
            return WidgetTimeline(entries: entries, policy: policy)
        }
    }
}
