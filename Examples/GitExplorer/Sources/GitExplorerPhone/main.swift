import Foundation
import GitExplorerModels

// The phone app, driven by lines on standard input: `add LOGIN`, `remove LOGIN`, `quit`.
let viewModel = FavoriteViewModel()
for await line in standardInputLines() {
    let words = line.split(separator: " ").map(String.init)
    switch (words.first, words.count) {
    case ("add", 2): viewModel.addToFavorite(id: words[1])
    case ("remove", 2): viewModel.removeToFavorite(id: words[1])
    case ("quit", _): exit(0)
    default: printLine("unknown command: \(line)")
    }
}
