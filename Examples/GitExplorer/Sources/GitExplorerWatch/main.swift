import Foundation
import GitExplorerModels

// The watch app, driven by lines on standard input: `delete LOGIN`, `quit`.
let model = WatchFavoritesModel()
for await line in standardInputLines() {
    let words = line.split(separator: " ").map(String.init)
    switch (words.first, words.count) {
    case ("delete", 2): model.delete(words[1])
    case ("quit", _): exit(0)
    default: printLine("unknown command: \(line)")
    }
}
