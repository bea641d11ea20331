import APNsProvider
import Foundation
import Pusher
import TestSupport

/// Runs one of this folder's hand-driven HTTP/2 clients (python3-h2 scripts, for frame timings no Swift client
/// here produces) against `server`, with a provider token the emulator accepts, and returns the JSON object it
/// prints.
func runH2Script(_ name: String, against server: EmulatorStandIn, _ arguments: [String]) async throws -> [String: Any] {
    let signer = try JWTSigner(keyFile: server.keyFile, keyID: EmulatorStandIn.keyID, teamID: EmulatorStandIn.teamID)
    let bearer = try ProviderToken(signer: signer).current().bearer
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(name).path
    let client = Process()
    client.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    client.arguments = [script, "--port", String(server.emulator.port), "--bearer", bearer] + arguments
    let output = Pipe()
    client.standardOutput = output
    try client.run()
    let data = try await Task.detached { try output.fileHandleForReading.readToEnd() ?? Data() }.value
    client.waitUntilExit()
    return jsonObject(String(decoding: data, as: UTF8.self))
}
