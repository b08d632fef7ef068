import Testing
import WatchConnectivity

// This file does not import Foundation, on purpose. On iOS and watchOS `import WatchConnectivity`
// alone makes Foundation's names visible (the framework's headers import Foundation and its
// module exports what it imports), so an app's session manager often has no other import.

/// A delegate as such a file declares it: `NSObject`, `Date`, `Data` and `URL` without
/// `import Foundation`.
final class FoundationFreeDelegate: NSObject, WCSessionDelegate {
    var lastActivationError: (any Error)?

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        lastActivationError = error
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        _ = userInfo["sentAt"] as? Date
    }

    func session(_ session: WCSession, didReceive file: WCSessionFile) {
        _ = try? Data(contentsOf: file.fileURL)
    }
}

@Suite struct FoundationReexportTests {
    @Test func aFileImportingOnlyWatchConnectivitySeesFoundation() {
        let delegate = FoundationFreeDelegate()
        let session = WCSession(environment: nil)
        session.delegate = delegate
        #expect(session.delegate === delegate)
        let payload: [String: Any] = ["sentAt": Date(timeIntervalSince1970: 0), "blob": Data([1, 2])]
        #expect(payload.count == 2)
        #expect(URL(fileURLWithPath: "/tmp/inbox").lastPathComponent == "inbox")
    }
}
