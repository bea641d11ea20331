import Foundation
@testable import HuaweiProvider
import ProviderKit
import PushCore
import TestSupport

/// A Huawei v3 service account for tests: an RSA key made by the openssl command, in Huawei's key JSON shape.
struct HuaweiKeyFixture {
    let directory: String
    let keyFile: String
    let jsonFile: String
    let projectID: String
    let keyID: String
    let subAccount: String

    init(projectID: String = "388421841221234567", keyID: String = "a1b2c3d4e5f6", subAccount: String = "100123456",
         tokenURI: String? = "https://oauth-login.cloud.huawei.com/oauth2/v3/token", bits: Int = 2048) throws {
        directory = makeTemporaryDirectory("huawei-key")
        keyFile = directory + "/private.pem"
        let made = try runCommand(which("openssl") ?? "/usr/bin/openssl",
                                  ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", keyFile])
        guard made.status == 0 else { throw TestSetupError("openssl genpkey failed: \(made.output)") }
        self.projectID = projectID
        self.keyID = keyID
        self.subAccount = subAccount
        jsonFile = directory + "/huawei-key.json"
        var fields: [String: Any] = [
            "project_id": projectID, "key_id": keyID, "sub_account": subAccount,
            "private_key": try String(contentsOfFile: keyFile, encoding: .utf8),
        ]
        if let tokenURI { fields["token_uri"] = tokenURI }
        try JSONSerialization.data(withJSONObject: fields).write(to: URL(fileURLWithPath: jsonFile))
    }

    /// The public half, PEM, for `openssl dgst -verify`.
    func publicKeyFile() throws -> String {
        let file = directory + "/public.pem"
        let made = try runCommand(which("openssl") ?? "/usr/bin/openssl", ["pkey", "-in", keyFile, "-pubout", "-out", file])
        guard made.status == 0 else { throw TestSetupError("openssl pkey failed: \(made.output)") }
        return file
    }
}

enum Fixture {
    static let topic = "com.example.chat"
    static let appID = "104123456"
    static let secret = "c2VjcmV0LWZvci10ZXN0cw+/="

    /// A client secret file holding `secret` with the whitespace a mounted file or an editor adds.
    static func secretFile(_ secret: String = Fixture.secret) throws -> String {
        let file = makeTemporaryDirectory("huawei-secret") + "/client-secret.txt"
        try "  \(secret)\n\n".write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A job of `tokens` with `payload` (the common Android shape) and the given expiration and collapse id.
    static func job(_ tokens: [String], payload: String = #"{"notification":{"title":"Alice","body":"hi"},"data":{"cid":"c1"}}"#,
                    expiration: Int64? = nil, collapseID: String? = nil, seq: UInt64 = 1) -> PushJob {
        let headers = PushHeaders(topic: topic, appTopic: topic, pushType: "", priority: 10, expiration: expiration,
                                  collapseID: collapseID)
        return PushJob(message: PushMessage(seq: seq, id: "m\(seq)", kind: .private, uuid: nil, headers: headers,
                                            payload: Array(payload.utf8), tokens: tokens, enqueuedAtMillis: nil))
    }

    /// `RequestTokens` for the first `count` tokens of a job, in order.
    static func tokens(_ count: Int) -> RequestTokens {
        count <= 1 ? RequestTokens(0) : RequestTokens(0, rest: Array(1..<count))
    }
}

extension RequestBody {
    /// The body's bytes parsed as a JSON object (nil for `.payload`).
    var object: [String: Any]? {
        guard case .bytes(let bytes) = self else { return nil }
        return jsonObject(bytes)
    }

    var bytes: [UInt8] {
        guard case .bytes(let bytes) = self else { return [] }
        return bytes
    }
}
