import Foundation
import GitHubAPI
import RelayProtocol
import TestSupport
import Testing

struct FixtureCatalogTests {
    @Test func theCatalogCompiledIntoTheBinaryIsTheOneOnDisk() throws {
        let embedded = try GitHubFixtureCatalog.embedded()
        #expect(embedded.logins == fixtureCatalog.logins)
        #expect(embedded.accounts == fixtureCatalog.accounts)
    }

    @Test func committedCatalogHasEnoughUsersAndMultiPageUsers() {
        #expect(fixtureCatalog.accounts.count >= 20)
        let multiPage = fixtureCatalog.accounts.filter { $0.repos.count > 100 }
        #expect(multiPage.count >= 3)
        for login in ["octocat", "torvalds", "gaearon", "mattt", "kylef", "JohnSundell", "twostraws", "onevcat"] {
            #expect(fixtureCatalog.account(login: login) != nil, "missing \(login)")
        }
    }

    @Test(arguments: fixtureCatalog.accounts.map(\.login))
    func everyUserIsConsistentWithItsRepos(_ login: String) throws {
        let account = try #require(fixtureCatalog.account(login: login))
        #expect(account.user["public_repos"]?.intValue == Int64(account.repos.count))
        #expect(account.user["html_url"]?.stringValue == "https://github.com/\(login)")
        for key in ["node_id", "avatar_url", "type", "created_at", "updated_at", "followers", "following"] {
            #expect(account.user[key] != nil, "user \(login) lacks \(key)")
        }
        let names = account.repos.compactMap { $0["name"]?.stringValue }
        #expect(names.count == account.repos.count)
        #expect(
            names == names.sorted { $0.lowercased() < $1.lowercased() }, "repos of \(login) are not in full_name order")
        for repo in account.repos {
            #expect(repo["owner"]?["login"]?.stringValue == login)
            #expect(repo["full_name"]?.stringValue == "\(login)/\(repo["name"]?.stringValue ?? "")")
            #expect(repo["stargazers_count"]?.intValue != nil)
            #expect(repo["updated_at"]?.stringValue != nil)
        }
    }

    @Test func looksUpLoginsCaseInsensitivelyAndByID() throws {
        let account = try #require(fixtureCatalog.account(login: "JOHNSUNDELL"))
        #expect(account.login == "JohnSundell")
        #expect(fixtureCatalog.account(id: account.id)?.login == "JohnSundell")
        #expect(fixtureCatalog.account(login: "no-such-user-here") == nil)
    }

    @Test func loadsAMinimalDirectoryAndTreatsAMissingReposFileAsNone() throws {
        let directory = TemporaryDirectory()
        directory.write(#"{"login":"Alice","id":7}"#, to: "users/alice.json")
        directory.write(#"{"login":"bob","id":8}"#, to: "users/bob.json")
        directory.write(#"[{"id":1,"name":"a"},{"id":2,"name":"b"}]"#, to: "repos/bob.json")
        let catalog = try GitHubFixtureCatalog.load(directory: directory.path)
        #expect(catalog.logins == ["Alice", "bob"])
        #expect(catalog.account(login: "alice")?.repos.isEmpty == true)
        #expect(catalog.account(login: "bob")?.repos.count == 2)
    }

    @Test(arguments: [
        ("users/a.json", "{not json", "invalid JSON"),
        ("users/a.json", #"{"login":"b","id":1}"#, "does not match the file name"),
        ("users/a.json", #"{"login":"a"}"#, "integer id"),
        ("users/a.json", #"[1,2]"#, "integer id"),
    ])
    func rejectsABadUserFile(_ path: String, _ contents: String, _ reason: String) {
        let directory = TemporaryDirectory()
        directory.write(contents, to: path)
        #expect(throws: GitHubStubError.self) { try GitHubFixtureCatalog.load(directory: directory.path) }
        do {
            _ = try GitHubFixtureCatalog.load(directory: directory.path)
        } catch {
            guard case .invalidFixture(let failing, let why) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(failing.hasSuffix(path))
            #expect(why.contains(reason), "\(why)")
        }
    }

    @Test func rejectsAReposFileThatIsNotAnArrayOfObjects() {
        let directory = TemporaryDirectory()
        directory.write(#"{"login":"a","id":1}"#, to: "users/a.json")
        directory.write(#"{"id":1}"#, to: "repos/a.json")
        #expect(throws: GitHubStubError.self) { try GitHubFixtureCatalog.load(directory: directory.path) }
    }

    @Test func rejectsADirectoryWithoutUsers() {
        let directory = TemporaryDirectory()
        #expect(throws: GitHubStubError.self) { try GitHubFixtureCatalog.load(directory: directory.path) }
        #expect(throws: GitHubStubError.self) { try GitHubFixtureCatalog.load(directory: directory.path + "/nope") }
    }
}
