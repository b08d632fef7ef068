import GitHubAPI
import Testing

struct LinkHeaderTests {
    @Test func parsesGitHubsPaginationHeader() {
        let header = LinkHeader(
            parsing: "<https://api.github.com/user/9919/repos?per_page=100&page=2>; rel=\"prev\", "
                + "<https://api.github.com/user/9919/repos?per_page=100&page=4>; rel=\"next\", "
                + "<https://api.github.com/user/9919/repos?per_page=100&page=5>; rel=\"last\", "
                + "<https://api.github.com/user/9919/repos?per_page=100&page=1>; rel=\"first\"")
        #expect(header.prev == "https://api.github.com/user/9919/repos?per_page=100&page=2")
        #expect(header.next == "https://api.github.com/user/9919/repos?per_page=100&page=4")
        #expect(header.last == "https://api.github.com/user/9919/repos?per_page=100&page=5")
        #expect(header.first == "https://api.github.com/user/9919/repos?per_page=100&page=1")
    }

    @Test func lastPageHasNoNext() {
        let header = LinkHeader(parsing: "<https://x/r?page=1>; rel=\"prev\", <https://x/r?page=1>; rel=\"first\"")
        #expect(header.next == nil)
        #expect(header.first == "https://x/r?page=1")
    }

    @Test func toleratesUnquotedRelParameterOrderAndSpacing() {
        let header = LinkHeader(
            parsing: "  <https://x/a?page=2> ;title=\"Page, two\"; REL=next  ,<https://x/a?page=9>;rel=last")
        #expect(header.next == "https://x/a?page=2")
        #expect(header.last == "https://x/a?page=9")
    }

    @Test func splitsSeveralRelationsInOneEntry() {
        let header = LinkHeader(parsing: "<https://x/a?page=1>; rel=\"first prev\"")
        #expect(header.first == "https://x/a?page=1")
        #expect(header.prev == "https://x/a?page=1")
    }

    @Test func keepsCommasInsideTheTarget() {
        let header = LinkHeader(parsing: "<https://x/a?ids=1,2,3&page=2>; rel=\"next\"")
        #expect(header.next == "https://x/a?ids=1,2,3&page=2")
    }

    @Test(arguments: ["", "garbage", "https://x/a; rel=next", "<https://x/a>", "<https://x/a; rel=next"])
    func ignoresMalformedEntries(_ value: String) {
        #expect(LinkHeader(parsing: value).next == nil)
    }

    @Test func formatsInGitHubsOrderAndRoundTrips() {
        let header = LinkHeader(links: ["first": "f", "next": "n", "prev": "p", "last": "l"])
        #expect(header.value == "<p>; rel=\"prev\", <n>; rel=\"next\", <l>; rel=\"last\", <f>; rel=\"first\"")
        #expect(LinkHeader(parsing: header.value!) == header)
        #expect(LinkHeader().value == nil)
    }
}
