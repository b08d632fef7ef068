import Foundation
import RelayProtocol

/// `WCSessionUserInfoTransfer`: one `transferUserInfo` (or complication) transfer this device sent.
///
/// It stays in ``WCSession/outstandingUserInfoTransfers`` until the counterpart received it,
/// it failed, or it was cancelled. The session hands the same object to
/// `session(_:didFinish:error:)`. An `NSObject`, as Apple's (so are ``WCSession``,
/// ``WCSessionFile`` and ``WCSessionFileTransfer``): equal only to itself, so
/// `outstandingUserInfoTransfers.contains(transfer)`, `firstIndex(of:)` and sets work as on iOS.
public final class WCSessionUserInfoTransfer: NSObject, Sendable {
    /// The transfer id (`tid` in the payload; the receiver drops a second copy).
    let id: String
    let payload: Payload
    /// A transfer that failed before it was encoded keeps the app's own dictionary to hand
    /// back as ``userInfo`` (the payload then holds only the transfer id).
    private let unsent: UnsentDictionary?
    private weak let session: WCSession?

    /// Sent by `transferCurrentComplicationUserInfo` within the budget.
    private let sentAsComplication: Bool

    init(id: String, payload: Payload, sentAsComplication: Bool, session: WCSession, unsent: [String: Any]? = nil) {
        self.id = id
        self.payload = payload
        self.sentAsComplication = sentAsComplication
        self.session = session
        self.unsent = unsent.map(UnsentDictionary.init)
    }

    /// Whether it is the current complication info: sent by `transferCurrentComplicationUserInfo`
    /// within the budget (false when it went as plain userInfo), and not untagged since by a
    /// newer one, as Apple's header says ("the previously current user info will be untagged").
    public var isCurrentComplicationInfo: Bool {
        guard sentAsComplication else { return false }
        return session?.isCurrentComplication(id) ?? true
    }

    /// The dictionary that was sent (for a transfer that failed before it could be encoded,
    /// the one the app passed).
    public var userInfo: [String: Any] { unsent?.dictionary ?? PropertyListPayload.dictionary(of: payload) }

    /// Whether it is still on its way (not received, failed or cancelled).
    public var isTransferring: Bool { session?.isOutstanding(self) ?? false }

    /// Cancels the transfer if the counterpart has not received it yet; otherwise does nothing.
    public func cancel() { session?.cancel(self) }
}

/// The dictionary of a transfer that failed before it was encoded (not a property list, or
/// sent from the watch as complication info), exactly as the app passed it.
///
/// `@unchecked Sendable`: `[String: Any]` is not `Sendable`; it is never changed here, only
/// handed back to the app that made it, as Apple's `userInfo` property hands back its own.
private struct UnsentDictionary: @unchecked Sendable {
    let dictionary: [String: Any]
}

/// `WCSessionFile`: a file that arrived, with its metadata.
///
/// `fileURL` lies in the session's temporary inbox, which is deleted when
/// `session(_:didReceive:)` returns: move the file during the call to keep it.
public final class WCSessionFile: NSObject, Sendable {
    /// Where the file is during the delegate call.
    public let fileURL: URL
    private let metadataPayload: Payload?

    init(fileURL: URL, metadata: Payload?) {
        self.fileURL = fileURL
        self.metadataPayload = metadata
    }

    /// The metadata dictionary sent with the file, if any.
    public var metadata: [String: Any]? { metadataPayload.map(PropertyListPayload.dictionary(of:)) }
}

/// `WCSessionFileTransfer`: one `transferFile` this device sent, with its progress (bytes
/// the counterpart received).
///
/// `@unchecked Sendable`: `Progress` is a thread-safe Foundation class that is not marked
/// `Sendable`; every other stored property is immutable.
public final class WCSessionFileTransfer: NSObject, @unchecked Sendable {
    /// The file and metadata being sent.
    public let file: WCSessionFile
    /// Completed and total unit counts of the transfer (bytes).
    public let progress: Progress
    let id: String
    /// How many `wc.fileChunk` items carry it (0 for a transfer that failed at the call).
    let chunks: Int
    private weak let session: WCSession?

    init(id: String, file: WCSessionFile, totalBytes: Int64, chunks: Int, session: WCSession) {
        self.id = id
        self.chunks = chunks
        self.file = file
        self.progress = Progress(totalUnitCount: totalBytes)
        self.session = session
    }

    /// Whether it is still on its way.
    public var isTransferring: Bool { session?.isOutstanding(self) ?? false }

    /// Cancels the transfer if it has not been delivered yet.
    public func cancel() { session?.cancel(self) }
}
