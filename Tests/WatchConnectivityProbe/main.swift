import Foundation
import WatchConnectivity

// A WatchConnectivity app for child-process tests (kill -9): the side and relay come from
// WATCHRELAY_URL / WATCHRELAY_ROLE / WATCHRELAY_STATE. Standard input: `userInfo N` queues
// ["n": N] with transferUserInfo and prints `queued N` once the call returned; `file PATH`
// queues a file (`queued file`); `quit`. Standard output: `activated`, `userInfo N` when the
// delegate starts handling an item (it then takes WCPROBE_HANDLE_SECONDS, default 0),
// `finished N` / `failed N CODE` on the sender; `file NAME SIZE FNV1A` for a received file,
// `fileFinished DONE/TOTAL` / `fileFailed CODE` on its sender.

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

extension ProbeDelegate {
    func session(_ session: WCSession, didReceive file: WCSessionFile) {
        let data = (try? Data(contentsOf: file.fileURL)) ?? Data()
        say("file \(file.fileURL.lastPathComponent) \(data.count) \(fnv1a(data))")
    }

    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {
        if let error = error as? WCError {
            say("fileFailed \(error.code.rawValue)")
        } else {
            say("fileFinished \(fileTransfer.progress.completedUnitCount)/\(fileTransfer.progress.totalUnitCount)")
        }
    }
}

/// FNV-1a (64-bit) of `data`, to compare a received file with the sent one.
func fnv1a(_ data: Data) -> UInt64 {
    data.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
}

let usage = """
    USAGE: WATCHRELAY_URL=URL WATCHRELAY_ROLE=phone|watch WATCHRELAY_STATE=DIR wc-probe

    A WatchConnectivity app for the child-process tests (kill -9). Reads stdin commands:
    `userInfo N` (transferUserInfo ["n": N], then prints `queued N`), `file PATH`
    (transferFile, then `queued file`), `quit`. Prints `activated`, `userInfo N` as the
    delegate handles an item (for WCPROBE_HANDLE_SECONDS, default 0), `finished N` or
    `failed N CODE` on the sender, `file NAME SIZE FNV1A` for a received file, and
    `fileFinished DONE/TOTAL` or `fileFailed CODE` on its sender.

    OPTIONS:
      -h, --help   show this help
    """
// Options before the session starts: `--help` and a typo printed nothing and ran the app.
if let option = CommandLine.arguments.dropFirst().first {
    if option == "-h" || option == "--help" {
        say(usage)
        exit(0)
    }
    FileHandle.standardError.write(Data("wc-probe: unknown option '\(option)' (it takes none but --help)\n\n\(usage)\n".utf8))
    exit(2)
}

let delegate = ProbeDelegate()
WCSession.default.delegate = delegate
WCSession.default.activate()
while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    if words.first == "userInfo", words.count == 2, let n = Int(words[1]) {
        WCSession.default.transferUserInfo(["n": n])
        say("queued \(n)")
    } else if words.first == "file", words.count == 2 {
        WCSession.default.transferFile(URL(fileURLWithPath: words[1]), metadata: nil)
        say("queued file")
    } else if words.first == "quit" {
        break
    }
}
withExtendedLifetime(delegate) {}
