import PushCore

/// An OPPO answer's body, read leniently: `{"code":0,"message":"..","data":..}`; `data` is `{"messageId":..}` for
/// `unicast` and a list `[{"messageId","registrationId","errorCode","errorMessage"}]` for `unicast_batch`.
struct OPPOAnswer: Equatable {
    struct Item: Equatable {
        var registrationID: String
        /// nil or 0: sent.
        var errorCode: Int64?
        var errorMessage: String?
    }

    var code: Int64?
    var message: String?
    var items: [Item] = []

    init(_ body: [UInt8]) {
        guard let document = try? JSONParser.parse(body), case .object = document else { return }
        code = document["code"]?.exactInteger ?? document["code"]?.stringValue.flatMap { Int64($0) }
        message = document["message"]?.stringValue.map { Printable.clipped($0, to: 200) }
        for entry in document["data"]?.arrayValue ?? [] {
            guard let id = entry["registrationId"]?.stringValue ?? entry["registration_id"]?.stringValue else { continue }
            items.append(Item(registrationID: id,
                              errorCode: entry["errorCode"]?.exactInteger ?? entry["errorCode"]?.stringValue.flatMap { Int64($0) },
                              errorMessage: entry["errorMessage"]?.stringValue.map { Printable.clipped($0, to: 200) }))
        }
    }
}
