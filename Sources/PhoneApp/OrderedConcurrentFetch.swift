/// Runs an async transform over a list with at most N calls in flight, results in input order.
///
/// The seed app had to choose: `MergeMany` fetched every favorite in parallel but emitted in
/// the order the answers came back; a `for` loop over `await` kept the order but fetched one
/// user at a time. This does both: a task group keeps up to ``maxConcurrent`` transforms
/// running, starting the next item as soon as one finishes, and writes each result into the
/// slot of its item, so the output order is the input order whatever order the answers come in.
public struct OrderedConcurrentFetch: Sendable, Hashable {
    /// The most transforms in flight at once (at least 1).
    public let maxConcurrent: Int

    /// Creates a fetcher; `maxConcurrent` below 1 counts as 1.
    public init(maxConcurrent: Int) {
        self.maxConcurrent = max(1, maxConcurrent)
    }

    /// Transforms every item, at most ``maxConcurrent`` at a time; element *i* of the result
    /// belongs to item *i*. Returns when every transform has finished.
    ///
    /// If the calling task is cancelled, the transforms still running are cancelled with it
    /// (they see `Task.isCancelled`), and items not yet started are still handed to
    /// `transform`, which is expected to return quickly when cancelled.
    public func map<Item: Sendable, Output: Sendable>(
        _ items: [Item], _ transform: @escaping @Sendable (Item) async -> Output
    ) async -> [Output] {
        guard !items.isEmpty else { return [] }
        var results = [Output?](repeating: nil, count: items.count)
        await withTaskGroup(of: (Int, Output).self) { group in
            var next = 0
            func startNext() {
                let index = next
                let item = items[index]
                next += 1
                group.addTask { (index, await transform(item)) }
            }
            while next < min(maxConcurrent, items.count) { startNext() }
            while let (index, output) = await group.next() {
                results[index] = output
                if next < items.count { startNext() }
            }
        }
        return results.map { $0! }
    }

    /// ``map(_:_:)`` for a transform that throws `Failure`: element *i* is item *i*'s output or
    /// error, so one failing item neither stops the others nor loses its place.
    public func mapResults<Item: Sendable, Output: Sendable, Failure: Error>(
        _ items: [Item], _ transform: @escaping @Sendable (Item) async throws(Failure) -> Output
    ) async -> [Result<Output, Failure>] {
        await map(items) { item in
            do throws(Failure) {
                return .success(try await transform(item))
            } catch {
                return .failure(error)
            }
        }
    }
}
