import Foundation
import PhoneApp
import Primitives
import RelayCommand
import RelayServer
import WatchApp

/// `demo --console`: after the story, the relay, phone and watch keep running; the watch
/// (started with `publishesFaces`) sends its widget faces to the console over its own
/// connection whenever they may have changed, and the terminal takes `add`/`remove`/`delete`/`quit`.
enum DemoConsole {
    /// Runs until `quit`, the end of standard input, or an element of `stops` (SIGINT,
    /// SIGTERM or SIGHUP: handled by the caller from before the lines a script waits for).
    static func run(relay: RelayServer, phone: PhoneCompanion, watch: HeadlessWatch, until stops: AsyncStream<Void>) async {
        guard let url = relay.consoleURL else { return }
        StandardOutput.writeLine("\n── The link stays up " + String(repeating: "─", count: 41))
        StandardOutput.writeLine("  console: \(url)")
        StandardOutput.writeLine("  type: add LOGIN / remove LOGIN (phone), delete LOGIN (watch), quit; set faults on the page")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in stops { break } }
            let lines = CLI.standardInputLines()
            group.addTask {
                for await line in lines {
                    let words = line.split(separator: " ").map(String.init)
                    guard let verb = words.first else { continue }
                    if verb == "quit" || verb == "exit" { return }
                    await perform(verb, words.dropFirst().first, phone: phone, watch: watch)
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private static func perform(_ verb: String, _ login: String?, phone: PhoneCompanion, watch: HeadlessWatch) async {
        guard let login, ["add", "remove", "delete"].contains(verb) else {
            StandardOutput.writeLine("  ? \(verb): add LOGIN, remove LOGIN, delete LOGIN or quit")
            return
        }
        do {
            switch verb {
            case "add": StandardOutput.writeLine("  phone: add \(login) → \(try await phone.add(login).sync)")
            case "remove": StandardOutput.writeLine("  phone: remove \(login) → \(try await phone.remove(login).sync)")
            default:
                try await watch.delete(login)
                StandardOutput.writeLine("  watch: delete \(login) sent (pending until the phone confirms)")
            }
        } catch {
            StandardOutput.writeLine("  \(verb) \(login) failed: \(error)")
        }
    }
}
