import Foundation

/// Why a widget's timeline was reloaded. A struct with static members, so an app can name
/// reasons of its own (`extension ReloadReason { static let snapshotReceived = … }`).
public struct ReloadReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The reason's name.
    public let rawValue: String
    /// A reason named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The widget was just placed: its first timeline (free: nothing else can show it).
    public static let widgetAdded = ReloadReason(rawValue: "widgetAdded")
    /// The app called `WidgetCenter.shared.reloadTimelines(ofKind:)`.
    public static let reloadTimelines = ReloadReason(rawValue: "reloadTimelines")
    /// The app called `WidgetCenter.shared.reloadAllTimelines()`.
    public static let reloadAllTimelines = ReloadReason(rawValue: "reloadAllTimelines")
    /// The timeline's `.atEnd` policy fired.
    public static let policyAtEnd = ReloadReason(rawValue: "policyAtEnd")
    /// The timeline's `.after(date)` policy fired.
    public static let policyAfterDate = ReloadReason(rawValue: "policyAfterDate")
    /// The app asked while in the foreground (free).
    public static let foregroundRequest = ReloadReason(rawValue: "foregroundRequest")
    /// The user changed the widget's configuration intent.
    public static let configurationChanged = ReloadReason(rawValue: "configurationChanged")
    /// Asked by hand (a CLI command, a test).
    public static let manual = ReloadReason(rawValue: "manual")

    public var description: String { rawValue }

    /// Whether a reload for this reason is never charged to the budget: the first timeline,
    /// and a request the app made while in the foreground (free when asked, whenever the
    /// reload itself happens).
    public var isBudgetExempt: Bool { self == .widgetAdded || self == .foregroundRequest }
}

/// One reload request, or a policy's request, as the scheduler received it.
public struct ReloadRequest: Sendable, Hashable {
    /// Why the reload is wanted.
    public var reason: ReloadReason
    /// When it was asked for (for a policy: the policy's date).
    public var requestedAt: Date
    /// When the data the reload will show was produced (a snapshot's `sentAt`), for the
    /// change-to-screen latency; `nil` when unknown.
    public var dataDate: Date?
    /// Asked while the app was in the foreground: the reload is free whenever it happens (its
    /// batch gains the reason ``ReloadReason/foregroundRequest``, not another request).
    public var madeInForeground: Bool

    /// A request for `reason` made at `requestedAt`.
    public init(reason: ReloadReason, requestedAt: Date, dataDate: Date? = nil, madeInForeground: Bool = false) {
        self.reason = reason
        self.requestedAt = requestedAt
        self.dataDate = dataDate
        self.madeInForeground = madeInForeground
    }
}

/// The requests for one widget coalesced since its last reload: they become one reload.
///
/// Coalescing rule: every request made before the scheduler's next flush joins the same
/// batch; the flush reloads once for the whole batch. A batch the budget refused stays
/// pending (*deferred*; the widget is stale) and keeps absorbing new requests until a
/// reload succeeds.
public struct PendingReload: Sendable, Hashable {
    /// Distinct reasons, in the order first requested.
    public private(set) var reasons: [ReloadReason]
    /// How many requests were coalesced.
    public private(set) var requestCount: Int
    /// When the batch's first request was made.
    public private(set) var firstRequestedAt: Date
    /// When the batch's newest request was made.
    public private(set) var lastRequestedAt: Date
    /// The newest ``ReloadRequest/dataDate`` among the requests: the data the reload will show.
    public private(set) var dataDate: Date?
    /// True once a reload for this batch was refused for budget.
    public internal(set) var isDeferred = false
    /// True when requests arrived since the last stale report.
    var hasUnreportedRequests = true

    init(_ request: ReloadRequest) {
        reasons = [request.reason]
        if request.madeInForeground, request.reason != .foregroundRequest { reasons.append(.foregroundRequest) }
        requestCount = 1
        firstRequestedAt = request.requestedAt
        lastRequestedAt = request.requestedAt
        dataDate = request.dataDate
    }

    /// The batch's reason: the first one requested.
    public var reason: ReloadReason { reasons[0] }

    /// Whether the batch is exempt by its reasons: any exempt reason (the widget's first
    /// timeline) makes the one reload free, whatever else joined it.
    var isExemptByReason: Bool { reasons.contains(where: \.isBudgetExempt) }

    mutating func merge(_ request: ReloadRequest) {
        if !reasons.contains(request.reason) { reasons.append(request.reason) }
        if request.madeInForeground, !reasons.contains(.foregroundRequest) { reasons.append(.foregroundRequest) }
        requestCount += 1
        lastRequestedAt = max(lastRequestedAt, request.requestedAt)
        if let d = request.dataDate, dataDate.map({ d > $0 }) ?? true { dataDate = d }
        hasUnreportedRequests = true
    }
}
