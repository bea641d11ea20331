import COpenSSL
import Foundation
import NIOConcurrencyHelpers

/// The vivo Push side as the router sees it (`EmulatedService`): the auth call (`/message/auth`, JSON, sign = md5
/// hex of app id + app key + timestamp + app secret, the timestamp within 10 minutes), and calls with the
/// `authToken` header: `/message/send` (one regId), `/message/saveListPayload` (a message saved, answered with a
/// `taskId`), `/message/pushToList` (2 to 1,000 regIds and a saved `taskId`). vivo de-duplicates by `requestId`: a
/// request sent again with the same id is answered as before and delivers nothing twice.
struct VivoCore: EmulatedService {
    static let vendor = "vivo"
    static let title = "vivo Push"
    static let authPath = "/message/auth"
    static let sendPath = "/message/send"
    static let savePath = "/message/saveListPayload"
    static let listPath = "/message/pushToList"

    let settings: EmulatorConfiguration.VivoSettings
    let stats = VendorStats()
    let clock = VendorClock()
    let injector: VendorFaultInjector
    let rate = VendorRate()
    private struct State {
        var tokens: [String: String] = [:]  // authToken -> appId
        var tasks: [String: Data] = [:]  // taskId -> the saved message, as sent
        var answered: [String: String] = [:]  // requestId -> the answer given
        var sentToday: [String: (day: Int64, messages: Int, lists: Int)] = [:]
    }
    private let state = NIOLockedValueBox(State())
    let side: VivoSide

    init(configuration: EmulatorConfiguration) throws {
        settings = configuration.vivo
        injector = VendorFaultInjector(settings.faults)
        side = VivoSide(stats: stats, clock: clock, injector: injector)
    }

    var faults: VendorFaults { injector.faults }

    func handles(path: String) -> Bool { [Self.authPath, Self.sendPath, Self.savePath, Self.listPath].contains(path) }

    func isAuthEndpoint(path: String) -> Bool { path == Self.authPath }

    private static func result(_ code: Int, _ desc: String, _ extra: String = "") -> String {
        #"{"result":\#(code),"desc":"\#(JSONText.escaped(desc))""# + extra + "}"
    }

    static func sign(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = bytes.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_md5(), nil) }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    func answer(_ request: IncomingRequest) -> VendorResponse? {
        guard handles(path: request.path) else { return nil }
        let json = [("content-type", "application/json;charset=UTF-8")]
        let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] ?? [:]
        if request.path == Self.authPath { return VendorResponse(status: 200, headers: json, body: auth(body)) }
        let call = judge(request, body)
        if request.path != Self.savePath {
            stats.record(request, status: call.status, code: String(call.code), delivered: call.delivered, refused: call.refused,
                         validatedOnly: false, classification: call.category, second: Int64(clock.now.rounded(.down)))
        }
        return VendorResponse(status: call.status, headers: json, body: call.body)
    }

    private func string(_ value: Any?) -> String? {
        if let text = value as? String { return text }
        if let number = value as? NSNumber { return number.stringValue }
        return nil
    }

    private func auth(_ body: [String: Any]) -> String {
        guard let appID = string(body["appId"]), let app = settings.apps.first(where: { $0.appID == appID }),
              string(body["appKey"]) == app.appKey else {
            stats.tokenRequested(issued: false)
            return Self.result(10200, "appId or appKey is not valid")
        }
        guard let stamp = string(body["timestamp"]), let millis = Double(stamp), abs(millis / 1000 - clock.now) <= 600 else {
            stats.tokenRequested(issued: false)
            return Self.result(10207, "timestamp is not valid")
        }
        guard string(body["sign"]) == Self.sign(appID + app.appKey + stamp + app.appSecret) else {
            stats.tokenRequested(issued: false)
            return Self.result(10206, "sign is not valid")
        }
        let token = "vivo-" + UUID().uuidString
        state.withLockedValue { $0.tokens[token] = appID }
        stats.tokenRequested(issued: true)
        return Self.result(0, "请求成功", #","authToken":"\#(token)""#)
    }

    private struct Call {
        var status = 200
        var code: Int
        var body: String
        var delivered: [String] = []
        var refused = 0
        var category: String?
    }

    private func judge(_ request: IncomingRequest, _ body: [String: Any]) -> Call {
        let header = request.headers.first { $0.name == "authtoken" }?.value ?? ""
        guard let appID = state.withLockedValue({ $0.tokens[header] }), let app = settings.apps.first(where: { $0.appID == appID }) else {
            return Call(code: 10201, body: Self.result(10201, "authToken is not valid"))
        }
        guard string(body["appId"]) == appID else { return Call(code: 10094, body: Self.result(10094, "appId does not match the authToken")) }
        if injector.faults.flowControl { return Call(status: 503, code: 503, body: "busy") }
        if let code = injector.next() { return Call(code: Int(code) ?? 10000, body: Self.result(Int(code) ?? 10000, "injected")) }
        guard rate.admit(app: appID, tokens: 1, now: clock.now, requestsPerSecond: injector.faults.requestsPerSecond, tokensPerSecond: nil) else {
            return Call(code: 10250, body: Self.result(10250, "too many requests"))
        }
        let requestID = string(body["requestId"]) ?? ""
        if request.path == Self.savePath { return save(body, app: app, requestID: requestID) }
        if !requestID.isEmpty, let earlier = state.withLockedValue({ $0.answered[requestID] }) {
            return Call(code: 0, body: earlier)
        }
        let regIDs: [String]
        let message: [String: Any]
        if request.path == Self.sendPath {
            guard let regID = body["regId"] as? String else { return Call(code: 10050, body: Self.result(10050, "regId is empty")) }
            regIDs = [regID]
            message = body
        } else {
            guard let list = body["regIds"] as? [String], (2...1000).contains(list.count) else {
                return Call(code: 10051, body: Self.result(10051, "regIds must hold 2 to 1,000 regIds"))
            }
            guard let taskID = body["taskId"] as? String, let data = state.withLockedValue({ $0.tasks[taskID] }),
                  let saved = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                return Call(code: 10052, body: Self.result(10052, "taskId does not exist"))
            }
            regIDs = list
            message = saved
        }
        if let refusal = classRefusal(message) { return refusal }
        let category = message["category"] as? String
        if regIDs.count == 1, settings.invalidPrefixes.contains(where: regIDs[0].hasPrefix) {
            return Call(code: 10302, body: Self.result(10302, "regId 不合法"), refused: 1, category: category)
        }
        if quotaSpent(app: app, messages: regIDs.count) {
            return Call(code: 10070, body: Self.result(10070, "total sends over the daily limit"))
        }
        var invalid: [String] = [], delivered: [String] = []
        for regID in regIDs {
            if settings.unknownPrefixes.contains(where: regID.hasPrefix) || settings.invalidPrefixes.contains(where: regID.hasPrefix) {
                invalid.append(regID)
            } else {
                delivered.append(regID)
            }
        }
        let users = invalid.map { #"{"userid":"\#(JSONText.escaped($0))","status":1}"# }
        let extra = request.path == Self.sendPath
            ? #","taskId":"\#(UUID().uuidString)""# + (users.first.map { #","invalidUser":\#($0)"# } ?? "")
            : #","taskId":"\#(string(body["taskId"]) ?? "")","invalidUsers":[\#(users.joined(separator: ","))]"#
        let answer = Self.result(0, "请求成功", extra)
        if !requestID.isEmpty { state.withLockedValue { $0.answered[requestID] = answer } }
        return Call(code: 0, body: answer, delivered: delivered, refused: invalid.count, category: category ?? "")
    }

    /// The message's class: a category vivo does not know (10096), or one of the other classification (10097).
    private func classRefusal(_ message: [String: Any]) -> Call? {
        guard let category = message["category"] as? String else { return nil }
        let classification = string(message["classification"]) ?? "0"
        if !settings.systemCategories.contains(category) && !settings.operationCategories.contains(category) {
            return Call(code: 10096, body: Self.result(10096, "category is not valid"))
        }
        if settings.systemCategories.contains(category) != (classification == "1") {
            return Call(code: 10097, body: Self.result(10097, "category does not match the classification"))
        }
        return nil
    }

    private func save(_ body: [String: Any], app: EmulatorConfiguration.VivoApp, requestID: String) -> Call {
        if let refusal = classRefusal(body) { return refusal }
        let day = Int64((clock.now + 8 * 3600) / 86_400)
        let over = state.withLockedValue { state -> Bool in
            var entry: (day: Int64, messages: Int, lists: Int) = state.sentToday[app.appID].flatMap { $0.day == day ? $0 : nil } ?? (day, 0, 0)
            if let limit = app.dailyListBodies, entry.lists >= limit { return true }
            entry.lists += 1
            state.sentToday[app.appID] = entry
            return false
        }
        if over { return Call(code: 10252, body: Self.result(10252, "saved list bodies over the daily limit")) }
        let taskID = "task-" + UUID().uuidString
        let data = (try? JSONSerialization.data(withJSONObject: body)) ?? Data()
        state.withLockedValue { $0.tasks[taskID] = data }
        return Call(code: 0, body: Self.result(0, "请求成功", #","taskId":"\#(taskID)""#))
    }

    private func quotaSpent(app: EmulatorConfiguration.VivoApp, messages: Int) -> Bool {
        guard let limit = app.dailyQuota else { return false }
        let day = Int64((clock.now + 8 * 3600) / 86_400)
        return state.withLockedValue { state in
            var entry: (day: Int64, messages: Int, lists: Int) = state.sentToday[app.appID].flatMap { $0.day == day ? $0 : nil } ?? (day, 0, 0)
            guard entry.messages + messages <= limit else { return true }
            entry.messages += messages
            state.sentToday[app.appID] = entry
            return false
        }
    }
}
