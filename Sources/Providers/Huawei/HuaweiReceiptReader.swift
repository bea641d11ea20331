import ProviderKit
import PushCore

/// Huawei's receipt callbacks (`POST /receipts/huawei`): the signature of `X-HUAWEI-CALLBACK-ID` checked against each
/// app with receipt settings (every one is tried, each in constant time), the signed time within 5 minutes of now,
/// then the statuses read. A status is believed for an app whose secret signed the request only, and only if its
/// `appid` (when there is one) is that app's: a status naming another app is left out and counted as refused.
struct HuaweiReceiptReader: ReceiptReader {
    let provider = HuaweiModule.provider
    let signers: [HuaweiReceiptSigner]

    var apps: [String] { signers.map(\.topic) }

    /// How far the signed time may be from now, either way: beyond it a callback is a replay or a clock far off.
    static let toleranceMillis: Int64 = 5 * 60 * 1000

    func read(_ request: ReceiptRequest) -> ReceiptReading {
        guard request.pathRemainder.isEmpty else {
            return .refused(ReceiptRefusal(.malformed, status: 404, "Huawei's callbacks come to /receipts/huawei, with nothing after it"))
        }
        let header: HuaweiCallbackHeader
        switch HuaweiCallbackHeader.parse(request.header(HuaweiCallbackHeader.name)) {
        case .success(let parsed): header = parsed
        case .failure(let refusal): return .refused(refusal)
        }
        // Every app is checked, so the time taken does not say which secrets came close.
        let signers = self.signers.filter { $0.signed(header) }
        guard !signers.isEmpty else { return .refused(ReceiptRefusal(.badSignature, "no app's receipt secret made this signature")) }
        guard header.isFresh(nowMillis: request.nowMillis, toleranceMillis: Self.toleranceMillis) else {
            return .refused(ReceiptRefusal(.stale, "signed at \(header.timestampMillis), more than 5 minutes from now (\(request.nowMillis))"))
        }
        let body: HuaweiReceiptBody
        switch HuaweiReceiptBody.parse(request.body) {
        case .success(let parsed): body = parsed
        case .failure(let refusal): return .refused(refusal)
        }
        var receipts: [Receipt] = []
        var skipped: [ReceiptRefusal] = []
        for status in body.statuses {
            guard let signer = Self.signer(for: status.appID, among: signers) else {
                skipped.append(ReceiptRefusal(.unknownApp, "a status names app \(Printable.clipped(status.appID ?? "", to: 40)), which did not sign the request"))
                continue
            }
            receipts.append(Receipt(app: signer.topic, token: status.token, status: status.status,
                                    messageID: status.biTag ?? status.requestID ?? "", timestampMillis: status.timestampMillis))
        }
        return .accepted(receipts, skipped: skipped)
    }

    /// The signing app a status is about: the one its `appid` names, or without one (or for an app configured
    /// without an id) the first that signed.
    static func signer(for appID: String?, among signers: [HuaweiReceiptSigner]) -> HuaweiReceiptSigner? {
        if let appID, let named = signers.first(where: { $0.appID == appID }) { return named }
        guard appID == nil else { return signers.first { $0.appID.isEmpty } }
        return signers.first
    }
}
