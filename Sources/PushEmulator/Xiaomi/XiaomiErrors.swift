import Foundation

/// One Xiaomi MiPush answer. Success: `{"result":"ok","trace_id":..,"code":0,"data":{"id":..[,"bad_regids":"a,b"]},
/// "description":"成功","info":"Received push messages for N REGID"}`; errors: `{"result":"error","trace_id":..,
/// "code":N,"description":..,"reason":..}`. Business errors come with HTTP 200 (as the OSS clients read them;
/// unverified); flow control is HTTP 503. The codes are Xiaomi's; the texts are the emulator's (Xiaomi's own
/// wording was not in the stored pages).
public struct XiaomiAnswer: Sendable, Equatable {
    public var status = 200
    public var code: Int
    public var reason: String
    public var delivered: [String] = []
    public var badRegIDs: [String] = []
    /// `extra.channel_id`, "" without one.
    public var channel: String?

    public var json: String {
        let traceID = "Xlm" + String(UInt64.random(in: .min ... .max), radix: 36)
        if status == 503 { return #"{"result":"error","trace_id":"\#(traceID)","code":503,"description":"Service Unavailable","reason":"\#(JSONText.escaped(reason))"}"# }
        guard code == 0 else {
            let description = Self.descriptions[code] ?? "错误"
            return #"{"result":"error","trace_id":"\#(traceID)","code":\#(code),"description":"\#(description)","reason":"\#(JSONText.escaped(reason))"}"#
        }
        let id = "slm" + String(UInt64.random(in: .min ... .max), radix: 36)
        let bad = badRegIDs.isEmpty ? "" : #","bad_regids":"\#(JSONText.escaped(badRegIDs.joined(separator: ",")))""#
        return #"{"result":"ok","trace_id":"\#(traceID)","code":0,"data":{"id":"\#(id)"\#(bad)},"description":"成功","info":"Received push messages for \#(delivered.count + badRegIDs.count) REGID"}"#
    }

    static func error(_ code: Int, _ reason: String) -> XiaomiAnswer { XiaomiAnswer(code: code, reason: reason) }

    static let flowControl = XiaomiAnswer(status: 503, code: 503, reason: "Flow control (emulator fault).")

    /// Short descriptions for the codes the emulator answers by itself.
    static let descriptions: [Int: String] = [
        -1: "未知错误", 10001: "系统错误", 10016: "缺少参数", 10017: "参数不合法", 10027: "调用频率超过限制",
        10034: "今日消息数已达上限", 10037: "请求已过期", 20301: "发送失败", 21301: "认证失败", 22022: "包名不合法",
        27001: "通道信息不匹配", 65014: "extra 自定义字段过多", 65015: "extra 字段过长",
    ]
}
