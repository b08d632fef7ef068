import Foundation

/// A GitHub user as the seed app keeps it (`nonisolated`: it crosses to the delegate queue).
nonisolated public struct GithubUser: Codable, Identifiable, Hashable, Sendable {
    public let login: String
    public let id: Int
    public let avatarUrl: String
    public let publicRepos: Int
    public let followers: Int

    public init(login: String, id: Int, avatarUrl: String, publicRepos: Int, followers: Int) {
        self.login = login
        self.id = id
        self.avatarUrl = avatarUrl
        self.publicRepos = publicRepos
        self.followers = followers
    }

    enum CodingKeys: String, CodingKey {
        case login, id, followers
        case avatarUrl = "avatar_url"
        case publicRepos = "public_repos"
    }
}

/// Writes a line to standard output at once (the test reads the apps' output through a pipe).
nonisolated public func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Standard input as lines, read on a thread of its own.
nonisolated public func standardInputLines() -> AsyncStream<String> {
    let (lines, continuation) = AsyncStream.makeStream(of: String.self)
    Thread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }.start()
    return lines
}
