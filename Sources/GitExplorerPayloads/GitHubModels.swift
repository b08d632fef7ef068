import RelayProtocol

/// A GitHub user as the watch shows it (GitExplorer's `User`).
public struct User: JSONRepresentable, Hashable {
    public var login: String
    public var id: Int64
    public var name: String?
    public var avatarURL: String
    public var htmlURL: String
    public var publicRepos: Int
    public var followers: Int
    public var following: Int

    public init(
        login: String, id: Int64, name: String? = nil, avatarURL: String, htmlURL: String, publicRepos: Int,
        followers: Int, following: Int
    ) {
        self.login = login
        self.id = id
        self.name = name
        self.avatarURL = avatarURL
        self.htmlURL = htmlURL
        self.publicRepos = publicRepos
        self.followers = followers
        self.following = following
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        login = try r.string("login", length: 1...39)
        id = try r.int("id")
        name = try r.optionalString("name", nullable: true)
        avatarURL = try r.string("avatarUrl")
        htmlURL = try r.string("htmlUrl")
        publicRepos = Int(try r.int("publicRepos", min: 0))
        followers = Int(try r.int("followers", min: 0))
        following = Int(try r.int("following", min: 0))
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("login", login)
        b.set("id", id)
        b.set("name", name)
        b.set("avatarUrl", avatarURL)
        b.set("htmlUrl", htmlURL)
        b.set("publicRepos", publicRepos)
        b.set("followers", followers)
        b.set("following", following)
        return b.json
    }
}

/// A GitHub repository in a profile's repo list.
public struct Repo: JSONRepresentable, Hashable {
    public var id: Int64
    public var name: String
    public var fullName: String
    public var description: String?
    public var language: String?
    public var stargazersCount: Int
    public var forksCount: Int
    public var htmlURL: String
    /// ISO-8601, as GitHub sends it.
    public var updatedAt: String
    public var fork: Bool

    public init(
        id: Int64, name: String, fullName: String, description: String? = nil, language: String? = nil,
        stargazersCount: Int, forksCount: Int, htmlURL: String, updatedAt: String, fork: Bool
    ) {
        self.id = id
        self.name = name
        self.fullName = fullName
        self.description = description
        self.language = language
        self.stargazersCount = stargazersCount
        self.forksCount = forksCount
        self.htmlURL = htmlURL
        self.updatedAt = updatedAt
        self.fork = fork
    }

    public init(reader r: ObjectReader) throws(ProtocolError) {
        id = try r.int("id")
        name = try r.string("name")
        fullName = try r.string("fullName")
        description = try r.optionalString("description", nullable: true)
        language = try r.optionalString("language", nullable: true)
        stargazersCount = Int(try r.int("stargazersCount", min: 0))
        forksCount = Int(try r.int("forksCount", min: 0))
        htmlURL = try r.string("htmlUrl")
        updatedAt = try r.string("updatedAt")
        fork = try r.bool("fork")
    }

    public var json: JSONValue {
        var b = ObjectBuilder()
        b.set("id", id)
        b.set("name", name)
        b.set("fullName", fullName)
        b.set("description", description)
        b.set("language", language)
        b.set("stargazersCount", stargazersCount)
        b.set("forksCount", forksCount)
        b.set("htmlUrl", htmlURL)
        b.set("updatedAt", updatedAt)
        b.set("fork", fork)
        return b.json
    }
}
