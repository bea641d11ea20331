import PushCore

/// An Honor answer's body, read leniently (never trapping on what Honor sends): `{"code":200,"message":"..",
/// "data":{"sendResult":true,"requestId":"..","failTokens":[..],"expireTokens":[..]}}`. `code` may come as a number
/// or a string; nil when the body is not such an object.
struct HonorAnswerBody: Equatable {
    var code: String?
    var message: String?
    /// Tokens Honor says are no longer valid (uninstalled, expired).
    var expireTokens: [String] = []
    /// Tokens Honor could not send to, for no stated reason.
    var failTokens: [String] = []

    init(_ body: [UInt8]) {
        guard let document = try? JSONParser.parse(body), case .object = document else { return }
        switch document["code"] {
        case .number(let text)?: code = text
        case .string(let text)?: code = text.isEmpty ? nil : text
        default: break
        }
        message = document["message"]?.stringValue.map { Printable.clipped($0, to: 200) }
        expireTokens = Self.strings(document["data"]?["expireTokens"])
        failTokens = Self.strings(document["data"]?["failTokens"])
    }

    private static func strings(_ value: JSONValue?) -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap(\.stringValue)
    }
}
