import Foundation
import GitExplorerModels

// Starts the seed's unfixed service and waits: activation's delegate call stops the process.
let service = WatchConnectivityService()
printLine("started")
try await Task.sleep(for: .seconds(30))
printLine("still running: the isolation was not caught")
withExtendedLifetime(service) {}
