import GitExplorerPayloads
import RelayProtocol
import Testing

@testable import WatchApp
import WidgetKit

@Suite struct WidgetContentTests {
    static let logins = [
        "a", "octocat", "dongik-song", "a-very-long-github-login-name", "abcdefghijklmnopqrstuvwxyz0123456789abc",
        "한글로그인사용자이름",
    ]

    func entry(_ user: User, position: Int = 2, count: Int = 5) -> FavoritesEntry {
        FavoritesEntry(date: Fx.t0, content: .user(user), favoritesCount: count, position: position)
    }

    @Test(arguments: logins)
    func everyFamilysTextFitsItsSlot(login: String) {
        let user = Fx.user(login, name: login + " " + login, repos: 123_456, followers: 98_765_432)
        let inline = WidgetContent(family: .accessoryInline, entry: entry(user))
        #expect(inline.lines.count == 1)
        #expect(TextMetrics.width(of: inline.lines[0]) <= 20)
        let rect = WidgetContent(family: .accessoryRectangular, entry: entry(user))
        #expect(rect.lines.count <= 3)
        #expect(rect.lines.allSatisfy { TextMetrics.width(of: $0) <= 24 })
        let corner = WidgetContent(family: .accessoryCorner, entry: entry(user))
        #expect(TextMetrics.width(of: corner.lines[0]) <= 4)
        #expect(TextMetrics.width(of: corner.label ?? "") <= 10)
        let circular = WidgetContent(family: .accessoryCircular, entry: entry(user, count: 150))
        #expect(circular.lines == ["99+"])
    }

    @Test func inlineDropsDetailBeforeTruncating() {
        #expect(WidgetContent(family: .accessoryInline, entry: entry(Fx.octocat)).lines == ["★ octocat · 8 repos"])
        #expect(WidgetContent(family: .accessoryInline, entry: entry(Fx.dongik)).lines == ["★ dongik-song · 23"])
        let long = Fx.user("a-very-long-github-login-name")
        #expect(WidgetContent(family: .accessoryInline, entry: entry(long)).lines == ["★ a-very-long-githu…"])
    }

    @Test func eachFamilyShowsItsPartOfTheUser() {
        let e = entry(Fx.torvalds, position: 2, count: 3)
        #expect(WidgetContent(family: .accessoryCircular, entry: e).lines == ["3"])
        #expect(WidgetContent(family: .accessoryCircular, entry: e).label == "FAV")
        #expect(
            WidgetContent(family: .accessoryRectangular, entry: e).lines
                == ["torvalds", "Linus Torvalds", "7 repos · 241k followers"])
        let corner = WidgetContent(family: .accessoryCorner, entry: e)
        #expect(corner.lines == ["7"])
        #expect(corner.label == "torvalds")
        #expect(corner.gauge == WidgetContent.Gauge(value: 2, total: 3))
    }

    @Test(arguments: [
        (0, "0"), (999, "999"), (1000, "1k"), (1999, "1.9k"), (12_345, "12k"), (999_999, "999k"),
        (1_000_000, "1M"), (1_250_000, "1.2M"), (98_765_432, "98M"), (-1500, "-1.5k"),
    ])
    func compactNumbersUseAtMostFourColumns(value: Int, text: String) {
        #expect(TextMetrics.compact(value) == text)
    }

    @Test func truncationCountsWideCharactersAsTwoColumns() {
        #expect(TextMetrics.width(of: "송동익") == 6)
        #expect(TextMetrics.truncate("송동익송동익", to: 7) == "송동익…")
        #expect(TextMetrics.truncate("hello world", to: 7) == "hello…")
        #expect(TextMetrics.truncate("short", to: 7) == "short")
        #expect(TextMetrics.fit(["too long for it", "fits"], in: 5) == "fits")
        #expect(TextMetrics.padRight("ab", to: 4) == "ab  ")
        #expect(TextMetrics.center("ab", in: 5) == " ab  ")
    }

    @Test(arguments: [
        ("🚀", 2), ("✨", 2), ("⚡", 2), ("⭐", 2), ("⌚", 2), ("🫠", 2), ("🇰🇷", 2), ("❤️", 2), ("☀️", 2),
        ("👨\u{200D}👩\u{200D}👧", 2), ("❤", 1), ("☀", 1), ("©", 1), ("#", 1), ("★", 1), ("⚠", 1), ("한", 2), ("a", 1),
    ])
    func emojiShownAsEmojiTakeTwoColumns(character: String, columns: Int) {
        // A terminal draws an emoji-presentation character (the emoji in GitHub names: 🚀, ✨)
        // two columns wide; counted as one, it pushed the frame's right edge out of line.
        #expect(TextMetrics.width(of: Character(character)) == columns)
    }

    @Test func aNameWithEmojiIsTruncatedToItsColumns() {
        #expect(TextMetrics.truncate("Jiwoo 🚀🚀🚀🚀", to: 10) == "Jiwoo 🚀…")
        #expect(TextMetrics.padRight("🚀", to: 4) == "🚀  ")
    }

    /// The count families show the phone's count, the omitted favorites included; the
    /// rectangular count says how many are on the phone only.
    @Test func countsIncludeTheFavoritesThePhoneLeftOut() {
        let cut = FavoritesEntry(date: Fx.t0, content: .count, favoritesCount: 12, omitted: 9)
        #expect(WidgetContent(family: .accessoryCircular, entry: cut).lines == ["12"])
        #expect(WidgetContent(family: .accessoryInline, entry: cut).lines == ["★ 12 favorites"])
        #expect(WidgetContent(family: .accessoryCorner, entry: cut).lines == ["12"])
        #expect(WidgetContent(family: .accessoryRectangular, entry: cut).lines == ["Favorites", "12 users", "+9 more on iPhone"])
        let onlyOnPhone = FavoritesEntry(date: Fx.t0, content: .count, favoritesCount: 4, omitted: 4)
        #expect(WidgetContent(family: .accessoryRectangular, entry: onlyOnPhone).lines == ["Favorites", "4 users", "4 on iPhone"])
        #expect(!WidgetContent(family: .accessoryRectangular, entry: onlyOnPhone).isEmpty)
        let corner = WidgetContent(
            family: .accessoryCorner,
            entry: FavoritesEntry(date: Fx.t0, content: .user(Fx.torvalds), favoritesCount: 12, omitted: 9, position: 2))
        #expect(corner.gauge == .init(value: 2, total: 12))
    }
}
