import Foundation
import WatchConnectivity

// A WatchConnectivity app for child-process tests (kill -9): the side and relay come from
// WATCHRELAY_URL / WATCHRELAY_ROLE / WATCHRELAY_STATE. Standard input: `userInfo N` queues
// ["n": N] with transferUserInfo and prints `queued N` once the call returned; `quit`.
// Standard output: `activated`, `userInfo N` when the delegate starts handling an item (it
// then takes WCPROBE_HANDLE_SECONDS, default 0), `finished N` / `failed N CODE` on the sender.

/// Prints a line at once (the test reads it through a pipe).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The probe's delegate: it only reports.
final class ProbeDelegate: NSObject, WCSessionDelegate {
    let handleSeconds = Double(ProcessInfo.processInfo.environment["WCPROBE_HANDLE_SECONDS"] ?? "") ?? 0

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {
        say(activationState == .activated ? "activated" : "not activated \(String(describing: error))")
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any]) {
        say("userInfo \(userInfo["n"] ?? "?")")
        if handleSeconds > 0 { Thread.sleep(forTimeInterval: handleSeconds) }
    }

    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?) {
        let n = userInfoTransfer.userInfo["n"] ?? "?"
        if let error = error as? WCError { say("failed \(n) \(error.code.rawValue)") } else { say("finished \(n)") }
    }
}

let delegate = ProbeDelegate()
WCSession.default.delegate = delegate
WCSession.default.activate()
while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    if words.first == "userInfo", words.count == 2, let n = Int(words[1]) {
        WCSession.default.transferUserInfo(["n": n])
        say("queued \(n)")
    } else if words.first == "quit" {
        break
    }
}
withExtendedLifetime(delegate) {}
