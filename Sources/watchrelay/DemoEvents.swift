import WatchApp

/// Buffers the watch's events so the demo (and `bench-widget`) can wait for the next one it
/// narrates.
///
/// A waiter is resumed as soon as an event arrives (no polling), so the time a benchmark
/// measures is the pipeline's, not a poll interval's.
actor DemoEvents {
    private var source: AsyncStream<WatchEvent>?
    private var pump: Task<Void, Never>?
    private var buffered: [WatchEvent] = []
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var ended = false

    /// Buffers `stream` from the first ``wait(_:_:)`` on (the stream keeps what comes before).
    init(_ stream: AsyncStream<WatchEvent>) {
        source = stream
    }

    /// The next event `pick` maps, within 10 s; earlier events it does not map are dropped.
    /// - Throws: ``DemoError`` after 10 s, or when the stream ended first.
    func wait<T: Sendable>(_ what: String, _ pick: @Sendable (WatchEvent) -> T?) async throws -> T {
        startPump()
        let deadline = ContinuousClock.now + .seconds(10)
        let timer = Task {
            try? await Task.sleep(until: deadline)
            self.wake()
        }
        defer { timer.cancel() }
        while true {
            while !buffered.isEmpty {
                if let t = pick(buffered.removeFirst()) { return t }
            }
            if ended { throw DemoError(description: "the watch's events ended before \(what)") }
            if ContinuousClock.now >= deadline { throw DemoError(description: "the demo waited 10 s for \(what)") }
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    private func startPump() {
        guard pump == nil, let stream = source else { return }
        source = nil
        pump = Task {
            for await event in stream { self.append(event) }
            self.end()
        }
    }

    private func append(_ event: WatchEvent) {
        buffered.append(event)
        wake()
    }

    private func end() {
        ended = true
        wake()
    }

    /// Resumes every waiter; each checks again what it waits for.
    private func wake() {
        let resumed = waiters
        waiters = []
        for waiter in resumed { waiter.resume() }
    }
}
