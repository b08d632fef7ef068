import Foundation
import RelayProtocol

/// `WCSessionUserInfoTransfer`: one `transferUserInfo` (or complication) transfer this device sent.
///
/// It stays in ``WCSession/outstandingUserInfoTransfers`` until the counterpart received it,
/// it failed, or it was cancelled. The session hands the same object to
/// `session(_:didFinish:error:)`.
public final class WCSessionUserInfoTransfer: Sendable {
    /// The transfer id (`tid` in the payload; the receiver drops a second copy).
    let id: String
    let payload: Payload
    private weak let session: WCSession?

    /// Sent by `transferCurrentComplicationUserInfo` within the budget.
    private let sentAsComplication: Bool

    init(id: String, payload: Payload, sentAsComplication: Bool, session: WCSession) {
        self.id = id
        self.payload = payload
        self.sentAsComplication = sentAsComplication
        self.session = session
    }

    /// Whether it is the current complication info: sent by `transferCurrentComplicationUserInfo`
    /// within the budget (false when it went as plain userInfo), and not untagged since by a
    /// newer one, as Apple's header says ("the previously current user info will be untagged").
    public var isCurrentComplicationInfo: Bool {
        guard sentAsComplication else { return false }
        return session?.isCurrentComplication(id) ?? true
    }

    /// The dictionary that was sent.
    public var userInfo: [String: Any] { PropertyListPayload.dictionary(of: payload) }

    /// Whether it is still on its way (not received, failed or cancelled).
    public var isTransferring: Bool { session?.isOutstanding(self) ?? false }

    /// Cancels the transfer if the counterpart has not received it yet; otherwise does nothing.
    public func cancel() { session?.cancel(self) }
}

/// `WCSessionFile`: a file that arrived, with its metadata.
///
/// `fileURL` lies in the session's temporary inbox, which is deleted when
/// `session(_:didReceive:)` returns: move the file during the call to keep it.
public final class WCSessionFile: Sendable {
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
public final class WCSessionFileTransfer: @unchecked Sendable {
    /// The file and metadata being sent.
    public let file: WCSessionFile
    /// Completed and total unit counts of the transfer (bytes).
    public let progress: Progress
    let id: String
    private weak let session: WCSession?

    init(id: String, file: WCSessionFile, totalBytes: Int64, session: WCSession) {
        self.id = id
        self.file = file
        self.progress = Progress(totalUnitCount: totalBytes)
        self.session = session
    }

    /// Whether it is still on its way.
    public var isTransferring: Bool { session?.isOutstanding(self) ?? false }

    /// Cancels the transfer if it has not been delivered yet.
    public func cancel() { session?.cancel(self) }
}
