import Foundation
import ProviderKit
import PushCore
import TestSupport
@testable import XiaomiProvider
import XCTest

/// Jobs, apps and secret files for the Xiaomi tests, and a form body read back into its fields.
enum XiaomiFixtures {
    static let topic = "com.example.chat"
    /// 2026-01-01 00:00:00.500 UTC: a wall time with a fraction of a second, so the ttl's milliseconds show.
    static let wallMillis: Int64 = 1_767_225_600_500

    static func job(payload: String, tokens: [String] = ["r1", "r2"], expiration: Int64? = nil, collapseID: String? = nil,
                    seq: UInt64 = 1) -> PushJob {
        let headers = PushHeaders(topic: topic, appTopic: topic, pushType: "", priority: 10, expiration: expiration,
                                  collapseID: collapseID)
        return PushJob(message: PushMessage(seq: seq, id: "m\(seq)", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(payload.utf8), tokens: tokens, enqueuedAtMillis: nil))
    }

    /// A secret file holding `secret` (with the newline editors add), in a directory of its own.
    static func secretFile(_ secret: String) -> String {
        let path = makeTemporaryDirectory("xiaomi") + "/app-secret.txt"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(secret.utf8)))
        return path
    }

    static func app(secret: String = "mi-secret", channelID: String = "", templateID: String = "",
                    requestsPerSecond: Int = XiaomiApp.defaultRequestsPerSecond) -> XiaomiApp {
        XiaomiApp(topic: topic, appSecretFile: secretFile(secret + "\n"), channelID: channelID, templateID: templateID,
                  requestsPerSecond: requestsPerSecond)
    }

    static func service(_ app: XiaomiApp, wallMillis: @escaping @Sendable () -> Int64 = { XiaomiFixtures.wallMillis }) throws -> XiaomiService {
        try XiaomiService(app: app, settings: XiaomiSettings(apps: [app]), metrics: .of(XiaomiModule.provider), wallMillis: wallMillis)
    }

    /// The body's fields in order, decoded as a strict form decoder would (percent escapes only: the encoder
    /// never writes `+`, which such a decoder would keep as a plus).
    static func fields(_ body: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> [(name: String, value: String)] {
        let text = String(decoding: body, as: UTF8.self)
        XCTAssertFalse(text.contains("+") || text.contains(" "), "spaces and plus signs are percent-encoded: \(text)", file: file, line: line)
        return text.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? "<bad escape>"
            let value = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? "<bad escape>" : "<no value>"
            return (name, value)
        }
    }

    /// The fields as a dictionary; fails if a name is sent twice.
    static func fieldMap(_ body: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> [String: String] {
        let list = fields(body, file: file, line: line)
        XCTAssertEqual(Set(list.map(\.name)).count, list.count, "each field once: \(list.map(\.name))", file: file, line: line)
        return Dictionary(list, uniquingKeysWith: { first, _ in first })
    }

    /// The body of `service`'s request for `tokens` of `job` (made once per job, as the scheduler does).
    static func body(_ service: XiaomiService, _ context: JobContext, _ tokens: RequestTokens) -> [UInt8] {
        guard case .bytes(let bytes) = service.body(for: context, tokens: tokens) else {
            XCTFail("a Xiaomi request has a body of its own")
            return []
        }
        return bytes
    }
}
