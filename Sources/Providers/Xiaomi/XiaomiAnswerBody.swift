import PushCore

/// A MiPush answer as read from its body: `{"result":"ok","code":0,"data":{"id":..,"bad_regids":"a,b"},..}` or
/// `{"result":"error","code":N,"description":..,"reason":..}`. Read strictly and defensively: the server's words
/// end up in dead letters and logs, so they are kept short and printable.
struct XiaomiAnswerBody {
    /// Xiaomi's result code; nil when the body is not a MiPush answer (a proxy's page, a cut body).
    var code: Int64?
    var description: String?
    var reason: String?
    /// The regIds a success names invalid (`data.bad_regids`).
    var badRegIDs: Set<String> = []

    /// Xiaomi's own words for a dead letter's `detail`: "description: reason", whichever are given.
    var detail: String? {
        let words = [description, reason].compactMap { $0 }.filter { !$0.isEmpty }
        return words.isEmpty ? nil : words.joined(separator: ": ")
    }

    /// `code` as a number or as digits in a string; a `result` of "ok" without one counts as 0. `bad_regids` as
    /// a comma-separated string (as production integrations read it; Xiaomi's pages do not show it) or as an
    /// array of strings: both readings, since missing it would send a dead token's feedback nowhere.
    init(_ body: [UInt8]) {
        guard !body.isEmpty, let object = try? JSONParser.parse(body, maxDepth: 8), object.objectMembers != nil else { return }
        switch object["code"] {
        case .number?: code = object["code"]?.exactInteger
        case .string(let text)?: code = Int64(Self.trimmed(text[...]))
        default: code = object["result"]?.stringValue == "ok" ? 0 : nil
        }
        description = object["description"]?.stringValue.map { Printable.clipped($0, to: 120) }
        reason = object["reason"]?.stringValue.map { Printable.clipped($0, to: 200) }
        switch object["data"]?["bad_regids"] {
        case .string(let list)?:
            for regID in list.split(separator: ",") {
                let trimmed = Self.trimmed(regID)
                if !trimmed.isEmpty { badRegIDs.insert(String(trimmed)) }
            }
        case .array(let items)?:
            for item in items { if let regID = item.stringValue, !regID.isEmpty { badRegIDs.insert(regID) } }
        default:
            break
        }
    }

    /// Without spaces at either end (a regId has none inside).
    static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
