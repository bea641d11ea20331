import Foundation
import TestSupport

/// Requests to the emulator's Huawei and Xiaomi paths over real HTTP/2 + TLS (the repo's `HTTP2Client`, through
/// `FCMTestClient`), on the vendor listener unless told otherwise.
struct VendorTestClient {
    let port: Int
    let caFile: String

    /// One request, its answer (status 0 when none came).
    func send(_ path: String, headers: [(name: String, value: String)], body: String) async -> (status: Int, body: [String: Any]) {
        await sendAll([(path, headers, body)])[0]
    }

    /// Requests at once (concurrent streams), answers in order.
    func sendAll(_ requests: [(path: String, headers: [(name: String, value: String)], body: String)]) async
        -> [(status: Int, body: [String: Any])] {
        let outcome = await FCMTestClient(port: port, caFile: caFile)
            .run(requests.map { FCMTestClient.Request(path: $0.path, headers: $0.headers, body: $0.body) })
        return requests.indices.map { outcome.answers[$0] ?? (0, [:]) }
    }

    /// application/x-www-form-urlencoded, each value percent-encoded (`+`, `&`, `=` and `,` inside values too).
    static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }
}

/// A Huawei service account for v3 tests: an RSA key (`openssl genpkey`) in Huawei's key JSON shape, and JWTs
/// signed PS256 with it by the openssl command (RSASSA-PSS, SHA-256, 32-byte salt): the emulator's verifier meets
/// a signer that is not its own code.
struct HuaweiAccountFixture {
    let directory: String
    let keyFile: String
    let jsonFile: String
    let projectID: String
    let keyID: String
    let subAccount: String

    init(projectID: String = "388421841221234567", keyID: String = "a1b2c3d4e5f6", subAccount: String = "100123456") throws {
        directory = makeTemporaryDirectory("huawei-account")
        keyFile = directory + "/private.pem"
        let result = try runCommand(which("openssl") ?? "/usr/bin/openssl",
                                    ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyFile])
        guard result.status == 0 else { throw TestSetupError("openssl genpkey failed: \(result.output)") }
        self.projectID = projectID
        self.keyID = keyID
        self.subAccount = subAccount
        jsonFile = directory + "/huawei-key.json"
        let fields: [String: Any] = [
            "project_id": projectID, "key_id": keyID, "sub_account": subAccount,
            "private_key": try String(contentsOfFile: keyFile, encoding: .utf8),
            "token_uri": "https://oauth-login.cloud.huawei.com/oauth2/v3/token",
        ]
        try JSONSerialization.data(withJSONObject: fields).write(to: URL(fileURLWithPath: jsonFile))
    }

    static let audience = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"

    /// A JWT; `saltLength` other than 32 is not PS256.
    func jwt(iat: Double = Date().timeIntervalSince1970, lifetime: Double = 3600, kid: String? = nil, iss: String? = nil,
             aud: String = HuaweiAccountFixture.audience, alg: String = "PS256", signingKey: String? = nil,
             saltLength: Int = 32) throws -> String {
        func encoded(_ object: [String: Any]) throws -> String {
            Self.base64URL(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        }
        let header = try encoded(["kid": kid ?? keyID, "typ": "JWT", "alg": alg])
        let claims = try encoded(["iss": iss ?? subAccount, "aud": aud, "iat": Int(iat), "exp": Int(iat + lifetime)])
        let input = directory + "/input-\(UUID().uuidString)", signature = input + ".sig"
        try Data("\(header).\(claims)".utf8).write(to: URL(fileURLWithPath: input))
        let result = try runCommand(which("openssl") ?? "/usr/bin/openssl", [
            "dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:\(saltLength)",
            "-sign", signingKey ?? keyFile, "-out", signature, input,
        ])
        guard result.status == 0 else { throw TestSetupError("openssl dgst failed: \(result.output)") }
        return "\(header).\(claims).\(Self.base64URL(try Data(contentsOf: URL(fileURLWithPath: signature))))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
