import Primitives

extension AsyncStream where Element: Sendable {
    /// The first element `pick` answers for, or nil once `seconds` passed (one timer) or the
    /// stream ended; with the last element seen either way. Stops reading when it returns.
    func first<T: Sendable>(
        within seconds: Double, _ pick: @escaping @Sendable (Element) -> T?
    ) async -> (found: T?, last: Element?) {
        let last = LockedState<Element?>(nil)
        let found = await withTaskGroup(of: T?.self) { group in
            group.addTask {
                for await element in self {
                    last.withLock { $0 = element }
                    if let t = pick(element) { return t }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        return (found, last.withLock { $0 })
    }
}
