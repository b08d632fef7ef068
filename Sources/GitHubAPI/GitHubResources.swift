import Foundation
import GitExplorerPayloads
import Primitives
import RelayProtocol

/// The fields of GitHub's user object (`GET /users/{login}`) that the app's ``User`` keeps.
///
/// GitHub sends some thirty more keys (bio, company, URL templates, …); they are ignored.
struct GitHubUserResource: Decodable {
    var login: String
    var id: Int64
    var name: String?
    var avatarURL: String
    var htmlURL: String
    var publicRepos: Int
    var followers: Int
    var following: Int

    enum CodingKeys: String, CodingKey {
        case login, id, name, followers, following
        case avatarURL = "avatar_url"
        case htmlURL = "html_url"
        case publicRepos = "public_repos"
    }

    /// The app model for the user asked for as `asked`, after checking the values the wire
    /// contract constrains: the login is the one asked for (in any case: GitHub's logins are
    /// case-insensitive), and no text is longer than ``GitHubDecoding/maxTextBytes``.
    func model(asked: String) throws(GitHubError) -> User {
        guard (1...39).contains(login.count) else {
            throw .malformedResponse("user login '\(login)' is not 1...39 characters")
        }
        guard login.lowercased() == asked.lowercased() else {
            throw .malformedResponse("asked for user \(asked), GitHub answered with user \(Excerpt.of(login))")
        }
        try GitHubDecoding.checkLengths(["name": name, "avatar_url": avatarURL, "html_url": htmlURL], of: "user \(asked)")
        for (key, value) in [("public_repos", publicRepos), ("followers", followers), ("following", following)]
        where value < 0 {
            throw .malformedResponse("user \(key) is negative (\(value))")
        }
        return User(
            login: login, id: id, name: name, avatarURL: avatarURL, htmlURL: htmlURL, publicRepos: publicRepos,
            followers: followers, following: following)
    }
}

/// The fields of GitHub's repository object (`GET /users/{login}/repos`) that ``Repo`` keeps.
struct GitHubRepoResource: Decodable {
    var id: Int64
    var name: String
    var fullName: String
    var description: String?
    var language: String?
    var stargazersCount: Int
    var forksCount: Int
    var htmlURL: String
    var updatedAt: String
    var fork: Bool

    enum CodingKeys: String, CodingKey {
        case id, name, description, language, fork
        case fullName = "full_name"
        case stargazersCount = "stargazers_count"
        case forksCount = "forks_count"
        case htmlURL = "html_url"
        case updatedAt = "updated_at"
    }

    /// The app model, after checking the values the wire contract constrains.
    func model() throws(GitHubError) -> Repo {
        try GitHubDecoding.checkLengths(
            ["name": name, "full_name": fullName, "description": description, "language": language, "html_url": htmlURL,
             "updated_at": updatedAt],
            of: "repo \(Excerpt.of(fullName))")
        guard stargazersCount >= 0, forksCount >= 0 else {
            throw .malformedResponse("repo \(fullName) has a negative count")
        }
        return Repo(
            id: id, name: name, fullName: fullName, description: description, language: language,
            stargazersCount: stargazersCount, forksCount: forksCount, htmlURL: htmlURL, updatedAt: updatedAt,
            fork: fork)
    }
}

/// Decodes GitHub JSON, turning `DecodingError` into a ``GitHubError/malformedResponse(_:)``
/// that names the key path and what was wrong.
enum GitHubDecoding {
    /// The longest text field kept from GitHub, in UTF-8 bytes. GitHub's own are far shorter (a
    /// name 255 characters, a description 350); a longer one is garbage, and kept it would
    /// grow every snapshot past what the relay takes (a 5 MB name froze the watch's favorites).
    static let maxTextBytes = 2048

    /// Fails with ``GitHubError/malformedResponse(_:)`` naming the first field over
    /// ``maxTextBytes`` (nil fields are fine).
    static func checkLengths(_ fields: KeyValuePairs<String, String?>, of what: String) throws(GitHubError) {
        for (key, value) in fields {
            guard let value, value.utf8.count > maxTextBytes else { continue }
            throw .malformedResponse("\(what): \(key) is \(value.utf8.count) bytes, more than \(maxTextBytes)")
        }
    }

    /// Decodes `body` as `T`; `what` names the request for the error message (e.g. `user octocat`).
    static func decode<T: Decodable>(_ type: T.Type, from body: Data, what: String) throws(GitHubError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch let error as DecodingError {
            throw .malformedResponse("\(what): \(describe(error))")
        } catch {
            throw .malformedResponse("\(what): \(error)")
        }
    }

    /// A short account of a decoding failure: what was expected, and at which key path.
    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)'\(location(context.codingPath))"
        case .typeMismatch(let type, let context):
            return "expected \(typeName(type))\(location(context.codingPath))"
        case .valueNotFound(let type, let context):
            return "null where \(typeName(type)) was expected\(location(context.codingPath))"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "body is not valid JSON" }
            return "invalid value\(location(context.codingPath))"
        @unknown default:
            return "\(error)"
        }
    }

    /// ` at repos[3].stargazers_count`, or nothing for the top level.
    private static func location(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return " at the top level" }
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return " at \(text)"
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "\(type)"
        }
    }
}
