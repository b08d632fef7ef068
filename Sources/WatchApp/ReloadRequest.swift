import RelayProtocol

/// Why a widget's timeline was reloaded.
public enum ReloadReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The widget was just placed: its first timeline (free: nothing else can show it).
    case widgetAdded
    /// A favorites snapshot arrived and was stored (the fix for the seed app's bug).
    case snapshotReceived
    /// The timeline's `.atEnd` policy fired.
    case policyAtEnd
    /// The timeline's `.after(date)` policy fired.
    case policyAfterDate
    /// The app asked while in the foreground (free).
    case foregroundRequest
    /// The user changed the widget's configuration intent.
    case configurationChanged
    /// Asked by hand (a CLI command, a test).
    case manual

    public var description: String { rawValue }

    /// Whether a reload for this reason alone is never charged to the budget.
    public var isBudgetExempt: Bool { self == .widgetAdded }
}

/// One `reloadTimelines` request, or a policy's request, as the scheduler received it.
public struct ReloadRequest: Sendable, Hashable {
    /// Why the reload is wanted.
    public var reason: ReloadReason
    /// When it was asked for (for a policy: the policy's date).
    public var requestedAt: Timestamp
    /// For ``ReloadReason/snapshotReceived``: the snapshot's `sentAt`, for the latency.
    public var snapshotSentAt: Timestamp?

    /// A request for `reason` made at `requestedAt`.
    public init(reason: ReloadReason, requestedAt: Timestamp, snapshotSentAt: Timestamp? = nil) {
        self.reason = reason
        self.requestedAt = requestedAt
        self.snapshotSentAt = snapshotSentAt
    }
}

/// The requests for one widget coalesced since its last reload: they become one reload.
///
/// Coalescing rule: every request made before the scheduler's next `flush(now:)` joins the
/// same batch; the flush reloads once for the whole batch. A batch the budget refused stays
/// pending (*deferred*; the widget is stale) and keeps absorbing new requests until a
/// reload succeeds.
public struct PendingReload: Sendable, Hashable {
    /// Distinct reasons, in the order first requested.
    public private(set) var reasons: [ReloadReason]
    /// How many requests were coalesced.
    public private(set) var requestCount: Int
    /// When the batch's first request was made.
    public private(set) var firstRequestedAt: Timestamp
    /// When the batch's newest request was made.
    public private(set) var lastRequestedAt: Timestamp
    /// The newest snapshot `sentAt` among the requests: the data the reload will show.
    public private(set) var snapshotSentAt: Timestamp?
    /// True once a reload for this batch was refused for budget.
    public internal(set) var isDeferred = false
    /// True when requests arrived since the last stale report.
    var hasUnreportedRequests = true

    init(_ request: ReloadRequest) {
        reasons = [request.reason]
        requestCount = 1
        firstRequestedAt = request.requestedAt
        lastRequestedAt = request.requestedAt
        snapshotSentAt = request.snapshotSentAt
    }

    /// The batch's reason: the first one requested.
    public var reason: ReloadReason { reasons[0] }

    /// Whether the whole batch is exempt by its reasons.
    var isExemptByReason: Bool { reasons.allSatisfy(\.isBudgetExempt) }

    mutating func merge(_ request: ReloadRequest) {
        if !reasons.contains(request.reason) { reasons.append(request.reason) }
        requestCount += 1
        lastRequestedAt = max(lastRequestedAt, request.requestedAt)
        if let sent = request.snapshotSentAt, snapshotSentAt.map({ sent > $0 }) ?? true { snapshotSentAt = sent }
        hasUnreportedRequests = true
    }
}
