import Foundation

/// Makes a self-signed certificate for `localhost` (and its key) as `<name>-cert.pem` and
/// `<name>-key.pem` in `directory`, which removes them when it goes (each call made a
/// directory of its own in the temporary directory, and nothing removed it).
public func makeSelfSignedCertificate(in directory: TemporaryDirectory, named name: String) async throws -> (
    certificate: String, key: String
) {
    let certificate = directory.path("\(name)-cert.pem")
    let key = directory.path("\(name)-key.pem")
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
