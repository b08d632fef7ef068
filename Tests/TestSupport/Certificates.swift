import Foundation

/// Makes a self-signed certificate for `localhost` (and its key) in a fresh temporary directory.
public func makeSelfSignedCertificate() async throws -> (certificate: String, key: String) {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("watchrelay-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let certificate = directory.appendingPathComponent("cert.pem").path
    let key = directory.appendingPathComponent("key.pem").path
    let process = TestProcess()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-days", "1",
        "-keyout", key, "-out", certificate,
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    await waitForExit(process)
    guard process.terminationStatus == 0 else { throw TestFailure("openssl exited with \(process.terminationStatus)") }
    return (certificate, key)
}
