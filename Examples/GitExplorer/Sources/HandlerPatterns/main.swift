import Foundation
import WatchConnectivity

// Handler patterns from iOS apps that compile only against Apple's own handler types (not
// `Sendable`): activates, then sends to a watch that is not running, through the protocol
// seam, and prints what the handlers got.
let session = WCSession.default
let connector = LegacyConnector(session: session)
session.delegate = connector
session.activate()
while session.activationState != .activated { try await Task.sleep(for: .milliseconds(20)) }
for outcome in connector.pingAbsentWatch() { print(outcome) }
