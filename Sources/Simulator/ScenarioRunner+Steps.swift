import Foundation
import GitHubAPI
import PhoneApp
import WatchApp

extension ScenarioRunner {
    /// Runs one step; throws ``StepFailure`` when it or its expectation fails.
    func perform(_ s: ScenarioStep) async throws {
        guard let action = ScenarioAction(rawValue: s.action) else {
            throw StepFailure(expected: "a known action", seen: "'\(s.action)'")
        }
        // `pair` checks its own: it asks for a new code when one expired, unless that is expected.
        // The runner's own failures count too (a watch that did not activate, an actor stopped):
        // they are how such a step fails.
        if let expected = s.expectError, action != .pair {
            do {
                try await dispatch(action, s)
            } catch {
                try Self.check(error: error, against: expected)
                return
            }
            throw StepFailure(expected: "an error containing '\(expected)'", seen: "success")
        }
        try await dispatch(action, s)
    }

    static func check(error: any Error, against expected: String) throws {
        var text = String(describing: error)
        if let p = error as? PhoneError { text = "\(p.code): \(p.description)" }
        if let w = error as? WatchAppError { text = "\(w.code): \(w.description)" }
        guard text.localizedCaseInsensitiveContains(expected) else {
            throw StepFailure(expected: "an error containing '\(expected)'", seen: text)
        }
    }

    private func dispatch(_ action: ScenarioAction, _ s: ScenarioStep) async throws {
        switch action {
        case .start, .reconnect: try await start(s)
        case .stop, .kill, .disconnect: try await stop(s)
        case .uninstallApp: try await uninstallApp(s)
        case .restart:
            try await stop(s)
            try await start(s)
        case .pair: try await pair(s)
        case .switchWatch: try await switchWatch(s)
        case .add, .remove, .move, .refresh: try await phoneStep(action, s)
        case .delete, .open, .select, .foreground, .background, .advance, .mark: try await watchStep(action, s)
        case .wait: try await wait(s)
        case .sleep: try await Task.sleep(for: .milliseconds(Int((s.seconds ?? 0.1) * 1000)))
        case .fault: try fault(s)
        case .linkFault: try await linkFault(s)
        case .expectWidget, .expectReloads, .expectProfile, .expectPhoneFavorites, .expectWatchFavorites, .expectRelay,
            .expectGitHub, .expectPhoneStatus:
            try await expect(action, s)
        }
    }

    // MARK: - Actors

    enum ActorKind { case relay, github, phone, watch }

    func kind(of name: String, _ s: ScenarioStep) throws -> ActorKind {
        // What it started as, else the rule a scenario's load checks with (relay, github, the
        // kind given, its name's start): a `"kind": "watch"` named `phone…` was a phone, and a
        // watch named so was one again in its later steps. (`relay` and `github` never start
        // as a phone or a watch.)
        if phones[name] != nil { return .phone }
        if watches[name] != nil { return .watch }
        switch ScenarioStep.kindAtLoad(of: name, given: s.kind) {
        case "relay": return .relay
        case "github": return .github
        case "phone": return .phone
        case .some: return .watch
        case nil:
            throw StepFailure(expected: "an actor named relay, github, phone… or watch… (or a kind)", seen: "'\(name)'")
        }
    }

    func actorName(_ s: ScenarioStep) throws -> String {
        guard let name = s.actor else { throw StepFailure(expected: "an 'actor' field", seen: "none") }
        return name
    }

    private func start(_ s: ScenarioStep) async throws {
        let name = try actorName(s)
        let kind = try kind(of: name, s)
        // Refused at load when the actor's kind is known then; otherwise here, before it starts.
        if let (field, owner) = s.misplacedStartField("\(kind)") {
            throw StepFailure(
                expected: "'\(field)' on \(ScenarioStep.whose(owner)) start only",
                seen: "\(ScenarioStep.whose("\(kind)")) start ('\(name)')")
        }
        switch kind {
        case .relay: try await startRelay(contextBytes: s.contextBytes)
        case .github: try await startGitHub()
        case .phone:
            let p = try phones[name] ?? makePhone(name)
            phones[name] = p
            let gh = try runningGitHubURL()
            try await p.start(relayURL: try relayAddress(), githubURL: gh, reposMaxAge: s.reposMaxAge)
        case .watch:
            let w = try watches[name] ?? makeWatch(name)
            watches[name] = w
            try await w.start(relayURL: try relayAddress(forWatch: true), budget: s.budget, foreground: s.foreground)
        }
    }

    /// A phone in this process, or a child process with `--processes`.
    private func makePhone(_ name: String) throws -> any ScenarioPhone {
        let dir = try stateDirectory(name)
        guard let childExecutable else { return SimulatedPhone(name: name, directory: dir, memory: memoryRelay) }
        return PhoneChildProcess(name: name, directory: dir, executable: childExecutable)
    }

    /// A watch in this process, or a child process with `--processes`.
    private func makeWatch(_ name: String) throws -> any ScenarioWatch {
        let dir = try stateDirectory(name)
        guard let childExecutable else { return SimulatedWatch(name: name, directory: dir, memory: memoryRelay) }
        return WatchChildProcess(name: name, directory: dir, executable: childExecutable)
    }

    /// `<run dir>/<name>`, for a name that keeps it there (a scenario built in Swift is not
    /// checked as a file is).
    private func stateDirectory(_ name: String) throws -> String {
        guard ScenarioStep.isValidActorName(name) else {
            throw StepFailure(expected: "an actor's name (1-64 of A-Z a-z 0-9 . _ -, not . or ..)", seen: "'\(name)'")
        }
        return directory + "/" + name
    }

    private func stop(_ s: ScenarioStep) async throws {
        let name = try actorName(s)
        switch try kind(of: name, s) {
        case .relay: await stopRelay()
        case .github: await stopGitHub()
        case .phone: try await phone(name).stop()
        case .watch: try await watch(name).stop()
        }
    }

    /// A phone's or a watch's app is uninstalled: the relay is told (PROTOCOL.md §7.1) and the
    /// device stops; its next `start` is the app installed again.
    private func uninstallApp(_ s: ScenarioStep) async throws {
        let name = try actorName(s)
        switch try kind(of: name, s) {
        case .phone: try await phone(name).uninstall()
        case .watch: try await watch(name).uninstall()
        case .relay, .github: throw StepFailure(expected: "a phone or a watch to uninstall the app of", seen: "'\(name)'")
        }
    }

    /// The relay's address for a phone, or `forWatch` (known once it started, kept while it is
    /// stopped): on a cluster, phones and watches connect to different nodes.
    func relayAddress(forWatch: Bool = false) throws -> String {
        guard !relayURL.isEmpty else { throw StepFailure(expected: "the relay started first", seen: "no relay yet") }
        return forWatch ? relayWatchURL : relayURL
    }

    func runningGitHubURL() throws -> URL {
        guard githubPort != 0 else { throw StepFailure(expected: "github started first", seen: "no github yet") }
        return URL(string: "http://127.0.0.1:\(githubPort)")!
    }

    func phone(_ name: String?) throws -> any ScenarioPhone {
        let name = name ?? "phone"
        guard let p = phones[name] else { throw StepFailure(expected: "a phone named '\(name)'", seen: "none started") }
        return p
    }

    func watch(_ name: String?) throws -> any ScenarioWatch {
        let name = name ?? "watch"
        guard let w = watches[name] else { throw StepFailure(expected: "a watch named '\(name)'", seen: "none started") }
        return w
    }

    // MARK: - Pairing

    /// The scenario relays' codes live about a second (so `delay` can expire one): a pair step
    /// that expects success begins again with a new code when a loaded machine let the first one
    /// expire, as a user would, at most this many times.
    private static let pairAttempts = 5

    private func pair(_ s: ScenarioStep) async throws {
        let phone = try phone(s.phone)
        let watch = try watch(s.watch)
        var attempt = 1
        while true {
            do {
                // The phone's failure (no relay to give a code) is checked as the watch's is.
                let code = try await phone.pairingCode()
                if let delay = s.delay { try await Task.sleep(for: .milliseconds(Int(delay * 1000))) }
                try await watch.pair(code: s.code ?? code)
                break
            } catch let failure as StepFailure {
                // The runner's own (a watch stopped) is checked too; it is never a code to ask again for.
                guard let expected = s.expectError else { throw failure }
                try Self.check(error: failure, against: expected)
                return
            } catch {
                let expired = (try? Self.check(error: error, against: "pairing_code_expired")) != nil
                if s.expectError == nil && s.code == nil && expired && attempt < Self.pairAttempts {
                    attempt += 1
                    continue
                }
                guard let expected = s.expectError else {
                    throw StepFailure(expected: "the watch to pair", seen: "error: \(error)")
                }
                try Self.check(error: error, against: expected)
                return
            }
        }
        if let expected = s.expectError {
            throw StepFailure(expected: "pairing to fail with '\(expected)'", seen: "paired")
        }
        let phoneName = s.phone ?? "phone"
        if await phone.activeWatch == nil, firstWatches[phoneName] == nil {
            firstWatches[phoneName] = s.watch ?? "watch"
        }
    }

    /// The phone switches to another of its watches: the phone app stops, and starts again
    /// talking to that watch's pair (a new one is paired with a `pair` step). What was queued
    /// for the other watch stays queued for it.
    private func switchWatch(_ s: ScenarioStep) async throws {
        let name = s.actor ?? s.phone ?? "phone"
        let p = try phones[name] ?? makePhone(name)
        phones[name] = p
        guard let target = s.watch else { throw StepFailure(expected: "a 'watch' field", seen: "none") }
        _ = try stateDirectory(target)  // the phone's `<dir>/watches/<target>`
        let wasRunning = await p.isRunning
        await p.stop()
        // The watch it paired before switching is its first pair (no watch id), not a new one.
        await p.useWatch(firstWatches[name] == target ? nil : target)
        if wasRunning { try await p.start(relayURL: try relayAddress(), githubURL: try runningGitHubURL(), reposMaxAge: nil) }
    }

    // MARK: - Phone

    private func phoneStep(_ action: ScenarioAction, _ s: ScenarioStep) async throws {
        let p = try phone(s.actor ?? s.phone)
        let sync: String?
        do {
            switch action {
            case .add: sync = try await p.add(try login(s))
            case .remove: sync = try await p.remove(try login(s))
            case .move: sync = try await p.move(try login(s), to: s.index ?? 0)
            default:
                try await p.refresh()
                sync = nil
            }
        } catch let failure as StepFailure {
            throw failure
        } catch let error where s.expectError == nil {
            throw StepFailure(expected: "success", seen: "error: \(error)")
        }
        // With `expectError`, ``perform(_:)`` checks the error (or says the step succeeded).
        if let expected = s.sync, sync != expected {
            throw StepFailure(expected: "sync \(expected)", seen: "sync \(sync ?? "none")")
        }
    }

    func login(_ s: ScenarioStep) throws -> String {
        guard let login = s.login else { throw StepFailure(expected: "a 'login' field", seen: "none") }
        return login
    }

    // MARK: - Watch

    private func watchStep(_ action: ScenarioAction, _ s: ScenarioStep) async throws {
        let w = try watch(s.actor ?? s.watch)
        switch action {
        case .delete: try await w.delete(try login(s))
        case .open: _ = try await w.open(try login(s))
        case .select: try await w.select(s.login)
        case .foreground: try await w.setForeground(true)
        case .background: try await w.setForeground(false)
        case .advance: try await w.advance(seconds: s.seconds ?? 1)
        default: w.log.markNow()
        }
    }

    // MARK: - GitHub faults

    private func fault(_ s: ScenarioStep) throws {
        let gh = try runningGitHub()
        let fault: GitHubStubFault?
        switch s.fault ?? "none" {
        case "down": fault = .down
        case "garbage": fault = .garbage
        case "wrongShape": fault = .wrongShape
        case "secondaryRateLimit":
            // Whole seconds, as GitHub's `Retry-After`: the phone asks nothing until then.
            fault = .secondaryRateLimit(retryAfterSeconds: Int((s.seconds ?? 60).rounded(.up)))
        case "rateLimit":
            // `count` more requests from this step on (the server's window may have charged
            // the phone's start and earlier steps already), in a window of `seconds` (default
            // an hour) from the next request: its end is the `X-RateLimit-Reset` the phone
            // waits for once refused, whatever `none` clears before.
            let window = Duration.milliseconds(Int(((s.seconds ?? 3600) * 1000).rounded(.up)))
            gh.restartRateLimit(GitHubStubRateLimit(limit: s.count ?? 0, window: window))
            return
        case "none":
            gh.setRateLimit(nil)
            // With a login, the global fault and that login's; without, every login's too.
            if let login = s.login {
                gh.setGlobalFault(nil)
                gh.setFault(nil, for: login)
            } else {
                gh.clearFaults()
            }
            return
        default:
            throw StepFailure(
                expected: "a fault (\(ScenarioStep.gitHubFaults.joined(separator: ", ")))", seen: "'\(s.fault ?? "")'")
        }
        if let login = s.login { gh.setFault(fault, for: login) } else { gh.setGlobalFault(fault) }
    }
}
