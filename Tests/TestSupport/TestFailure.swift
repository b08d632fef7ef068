/// A test failure with a message: what a helper throws when something did not happen in time or
/// came out wrong, so the failing test prints the reason.
public struct TestFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// A failure that says `description`.
    public init(_ description: String) { self.description = description }
}
