import PushCore

/// A Push Kit answer as read: `{"code":"80100000","msg":"…","requestId":"…"}`, and for partial failures the tokens
/// `msg` names. `msg` is JSON inside a string: v1 `{"success":3,"failure":1,"illegal_tokens":["…"]}`, v3
/// `{"failure":1,"illegalTokens":{"noRight":["…"]}}` (v3's other keys are unverified).
///
/// Read leniently where Huawei's documents are thin, so either reading works: `code` as a string (documented) or
/// a number; `msg` as a JSON string (documented) or an object; `illegal_tokens` or `illegalTokens` in either
/// version, the latter as `{reason: [tokens]}` or a plain list. Nothing here traps on what the server sends.
struct HuaweiAnswerBody: Equatable {
    /// The reason a v1 list (`illegal_tokens`, or a plain `illegalTokens` list) gives its tokens.
    static let v1ListReason = "illegal_tokens"

    var code: String?
    /// `msg` as text (a partial failure's JSON as written), printable and clipped: a dead letter's `detail`.
    var message: String?
    /// Every token the answer names, with its reason, in the answer's order.
    var listed: [Listed] = []

    struct Listed: Equatable {
        var token: String
        var reason: String
    }

    init(code: String? = nil, message: String? = nil, listed: [Listed] = []) {
        self.code = code
        self.message = message
        self.listed = listed
    }

    init(_ body: [UInt8]) {
        guard !body.isEmpty, let document = try? JSONParser.parse(body, maxDepth: 8), document.objectMembers != nil else { return }
        if let text = document["code"]?.stringValue {
            code = Printable.clipped(text, to: 40)
        } else if let number = document["code"]?.exactInteger {
            code = String(number)
        }
        var detail: JSONValue?
        switch document["msg"] {
        case .string(let text)?:
            message = Printable.clipped(text, to: 200)
            if text.utf8.first == UInt8(ascii: "{") { detail = try? JSONParser.parse(Array(text.utf8), maxDepth: 8) }
        case .object(let members)?:
            detail = .object(members)
            message = Printable.clipped(String(decoding: JSONWriter.canonical(.object(members)), as: UTF8.self), to: 200)
        default:
            break
        }
        if let detail { listed = Self.tokens(in: detail) }
    }

    /// The tokens a partial failure's detail names.
    static func tokens(in detail: JSONValue) -> [Listed] {
        var listed: [Listed] = []
        func add(_ list: JSONValue?, reason: String) {
            guard case .array(let items)? = list else { return }
            for item in items { if let token = item.stringValue { listed.append(Listed(token: token, reason: reason)) } }
        }
        add(detail["illegal_tokens"], reason: v1ListReason)
        switch detail["illegalTokens"] {
        case .object(let groups)?:
            for group in groups { add(group.value, reason: Printable.clipped(group.key, to: 60)) }
        case let list?:
            add(list, reason: v1ListReason)
        case nil:
            break
        }
        return listed
    }
}
