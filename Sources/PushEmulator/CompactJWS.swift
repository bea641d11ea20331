import Foundation

/// A JWT in JWS compact form (`header.claims.signature`, each base64url), decoded but not yet verified: what
/// the emulator's verifiers (APNs ES256 provider tokens, FCM RS256 assertions, a vendor side's PS256 tokens)
/// read before their own checks. Nil for anything that is not three base64url parts with JSON objects first.
struct CompactJWS {
    let header: [String: Any]
    let claims: [String: Any]
    let signature: [UInt8]
    /// The bytes the signature covers: `header.claims` exactly as sent.
    let signingInput: [UInt8]

    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Self.base64URL(parts[0]), let claimBytes = Self.base64URL(parts[1]),
              let signature = Self.base64URL(parts[2]),
              let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
              let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { return nil }
        self.header = header
        self.claims = claims
        self.signature = signature
        signingInput = Array("\(parts[0]).\(parts[1])".utf8)
    }

    static func base64URL(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
