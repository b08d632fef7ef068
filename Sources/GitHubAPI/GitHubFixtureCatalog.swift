import Foundation
import RelayProtocol

/// The users and repositories the fixture GitHub server serves, as GitHub's own JSON.
///
/// On disk (see `Simulator/fixtures/github/`): `users/<login>.json` holds one GitHub user
/// object, `repos/<login>.json` the user's repository objects in GitHub's order (a missing
/// file means no repositories). Logins are matched case-insensitively, as GitHub does.
public struct GitHubFixtureCatalog: Sendable {
    /// One user and their repositories, as GitHub JSON values.
    public struct Account: Sendable, Hashable {
        /// The login as GitHub spells it (the `login` of ``user``).
        public var login: String
        /// The numeric user ID (the `id` of ``user``).
        public var id: Int64
        /// The full GitHub user object.
        public var user: JSONValue
        /// The full GitHub repository objects, in the order they are served.
        public var repos: [JSONValue]

        /// Creates an account from a user object (which must have a string `login` and an
        /// integer `id`) and its repositories; `nil` if the user object lacks them.
        public init?(user: JSONValue, repos: [JSONValue]) {
            guard let login = user["login"]?.stringValue, let id = user["id"]?.intValue else { return nil }
            self.login = login
            self.id = id
            self.user = user
            self.repos = repos
        }
    }

    /// Every account, ordered by lowercased login.
    public let accounts: [Account]
    private let byLogin: [String: Int]
    private let byID: [Int64: Int]

    /// Creates a catalog; of accounts sharing a login (case-insensitively), the first is kept.
    public init(accounts: [Account]) {
        var unique: [Account] = []
        var seen: Set<String> = []
        for account in accounts where seen.insert(account.login.lowercased()).inserted {
            unique.append(account)
        }
        unique.sort { $0.login.lowercased() < $1.login.lowercased() }
        self.accounts = unique
        byLogin = Dictionary(unique.enumerated().map { ($1.login.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        byID = Dictionary(unique.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The logins, in catalog order.
    public var logins: [String] { accounts.map(\.login) }

    /// The account with this login (case-insensitive).
    public func account(login: String) -> Account? {
        byLogin[login.lowercased()].map { accounts[$0] }
    }

    /// The account with this numeric ID.
    public func account(id: Int64) -> Account? {
        byID[id].map { accounts[$0] }
    }

    /// Loads `users/*.json` and the matching `repos/*.json` from a fixture directory.
    /// - Throws: ``GitHubStubError/invalidFixture(path:reason:)`` naming the first bad file:
    ///   no `users/` directory or no user in it, unreadable or invalid JSON, a user object without
    ///   `login`/`id` or whose login is not its file name, a repos file that is not an array of objects.
    public static func load(directory: String) throws(GitHubStubError) -> GitHubFixtureCatalog {
        let root = URL(fileURLWithPath: directory, isDirectory: true)
        let usersDirectory = root.appendingPathComponent("users", isDirectory: true)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: usersDirectory.path)
                .filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw .invalidFixture(path: usersDirectory.path, reason: "cannot list the users directory")
        }
        guard !names.isEmpty else { throw .invalidFixture(path: usersDirectory.path, reason: "no users/*.json file") }
        var accounts: [Account] = []
        for name in names {
            let fileLogin = String(name.dropLast(".json".count))
            let userFile = usersDirectory.appendingPathComponent(name)
            let user = try parse(userFile)
            guard let account = Account(user: user, repos: []) else {
                throw .invalidFixture(
                    path: userFile.path, reason: "not a user object with a string login and integer id")
            }
            guard account.login.lowercased() == fileLogin.lowercased() else {
                throw .invalidFixture(
                    path: userFile.path, reason: "login '\(account.login)' does not match the file name")
            }
            let reposFile = root.appendingPathComponent("repos/\(name)")
            var repos: [JSONValue] = []
            if FileManager.default.fileExists(atPath: reposFile.path) {
                guard let array = try parse(reposFile).arrayValue, array.allSatisfy({ $0.objectValue != nil }) else {
                    throw .invalidFixture(path: reposFile.path, reason: "not an array of repository objects")
                }
                repos = array
            }
            accounts.append(Account(user: user, repos: repos)!)
        }
        return GitHubFixtureCatalog(accounts: accounts)
    }

    private static func parse(_ file: URL) throws(GitHubStubError) -> JSONValue {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw .invalidFixture(path: file.path, reason: "cannot read the file")
        }
        do {
            return try JSONParser.parse(data)
        } catch {
            throw .invalidFixture(path: file.path, reason: "invalid JSON: \(error)")
        }
    }
}

extension GitHubFixtureCatalog {
    /// The catalog compiled into the binary (from `Simulator/fixtures/github` at build time),
    /// so the fixture server works from a copied binary in any directory.
    /// - Throws: ``GitHubStubError/invalidFixture(path:reason:)`` if a compiled-in file is
    ///   not valid (the same checks as ``load(directory:)``).
    public static func embedded() throws(GitHubStubError) -> GitHubFixtureCatalog {
        var accounts: [Account] = []
        for file in embeddedFiles {
            let path = "embedded:users/\(file.login).json"
            let user: JSONValue
            do {
                user = try JSONParser.parse(Array(file.user.utf8))
            } catch {
                throw .invalidFixture(path: path, reason: "invalid JSON: \(error)")
            }
            var repos: [JSONValue] = []
            if let text = file.repos {
                let parsed: JSONValue
                do {
                    parsed = try JSONParser.parse(Array(text.utf8))
                } catch {
                    throw .invalidFixture(path: "embedded:repos/\(file.login).json", reason: "invalid JSON: \(error)")
                }
                guard let array = parsed.arrayValue, array.allSatisfy({ $0.objectValue != nil }) else {
                    throw .invalidFixture(path: "embedded:repos/\(file.login).json", reason: "not an array of repository objects")
                }
                repos = array
            }
            guard let account = Account(user: user, repos: repos), account.login.lowercased() == file.login.lowercased() else {
                throw .invalidFixture(path: path, reason: "not a user object whose login is its file name")
            }
            accounts.append(account)
        }
        return GitHubFixtureCatalog(accounts: accounts)
    }
}
