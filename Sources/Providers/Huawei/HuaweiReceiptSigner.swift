import Foundation
import ProviderKit
import PushCore

/// One app's receipt credential: the HMAC secret of its callback (from `receipt_secret_file`) and the callback's
/// user name. Huawei signs each callback with `Base64(HMAC-SHA256(secret, timestamp + nonce + userName))` in
/// `X-HUAWEI-CALLBACK-ID`; a signature this app's secret did not make proves nothing for it.
struct HuaweiReceiptSigner: Sendable, CustomStringConvertible {
    let topic: String
    /// The app's id as a receipt's `appid` names it ("" for a v3 app, whose configuration has none: any `appid`).
    let appID: String
    let userName: String
    private let secret: Secret

    init(topic: String, appID: String, userName: String, secret: Secret) {
        self.topic = topic
        self.appID = appID
        self.userName = userName
        self.secret = secret
    }

    var description: String { "HuaweiReceiptSigner(app: \(topic))" }

    /// Files larger than this hold no secret (a path mixed up with another file).
    static let largestFile = 4096

    /// Reads the app's receipt secret, surrounding whitespace trimmed; a missing, empty or oversized file is an error
    /// naming the file, never its content.
    static func load(app: HuaweiApp) throws(HuaweiCredentialError) -> HuaweiReceiptSigner {
        let path = app.receiptSecretFile
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HuaweiCredentialError(file: path, reason: "receipt secret file (receipt_secret_file of \(app.topic)) not found or not readable")
        }
        guard data.count <= largestFile, let text = String(bytes: data, encoding: .utf8) else {
            throw HuaweiCredentialError(file: path, reason: "the receipt secret file is not UTF-8 text of at most \(largestFile) bytes")
        }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw HuaweiCredentialError(file: path, reason: "the receipt secret file is empty") }
        return HuaweiReceiptSigner(topic: app.topic, appID: app.api == .v1 ? app.appID : "", userName: app.receiptUserName,
                                   secret: Secret(secret))
    }

    /// The signature this app's secret makes for `timestamp` and `nonce` (the header's words, as sent).
    func signature(timestamp: String, nonce: String) -> String {
        Data(HMACSHA256.mac(key: secret.value, message: timestamp + nonce + userName)).base64EncodedString()
    }

    /// Whether `value` is that signature, compared in constant time.
    func signed(_ header: HuaweiCallbackHeader) -> Bool {
        ConstantTime.equal(signature(timestamp: header.timestamp, nonce: header.nonce), header.value)
    }
}
