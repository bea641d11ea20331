import PushCore

/// A vivo answer's body, read leniently: `{"result":0,"desc":"..","taskId":"..","invalidUser":{"userid","status"}}`
/// for a send, `"invalidUsers":[{"userid","status"}]` for a list push.
struct VivoAnswer: Equatable {
    var result: Int64?
    var desc: String?
    var taskID: String?
    /// Each token vivo names, with its status: 1 unknown to the app, 2 uninstalled or unsubscribed, 3 offline for 90
    /// days, 4 not a test device.
    var invalid: [(token: String, status: Int64)] = []

    init(_ body: [UInt8]) {
        guard let document = try? JSONParser.parse(body), case .object = document else { return }
        result = document["result"]?.exactInteger ?? document["result"]?.stringValue.flatMap { Int64($0) }
        desc = document["desc"]?.stringValue.map { Printable.clipped($0, to: 200) }
        taskID = document["taskId"]?.stringValue ?? document["taskId"]?.exactInteger.map { String($0) }
        var entries = document["invalidUsers"]?.arrayValue ?? []
        if let one = document["invalidUser"], case .object = one { entries.append(one) }
        for entry in entries {
            guard let token = entry["userid"]?.stringValue ?? entry["userId"]?.stringValue else { continue }
            invalid.append((token, entry["status"]?.exactInteger ?? 0))
        }
    }

    static func == (lhs: VivoAnswer, rhs: VivoAnswer) -> Bool {
        lhs.result == rhs.result && lhs.desc == rhs.desc && lhs.taskID == rhs.taskID
            && lhs.invalid.map(\.token) == rhs.invalid.map(\.token) && lhs.invalid.map(\.status) == rhs.invalid.map(\.status)
    }
}
