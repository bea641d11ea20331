import COpenSSL
import Foundation
import NIOConcurrencyHelpers

/// The OPPO Push side as the router sees it (`EmulatedService`): the auth call (`/server/v1/auth`: app_key,
/// timestamp within 10 minutes, sign = sha256 hex of app key + timestamp + master secret), and sends in forms
/// carrying `auth_token`: `unicast` (`message`, one object) and `unicast_batch` (`messages`, up to 1,000), each
/// message `{"target_type":2,"target_value":<regId>,"notification":{..}}`. OPPO sends an `app_message_id` once per
/// target: a message sent again with the same id is answered as sent and not delivered twice.
struct OPPOCore: EmulatedService {
    static let vendor = "OPPO"
    static let title = "OPPO Push"
    static let authPath = "/server/v1/auth"
    static let unicastPath = "/server/v1/message/notification/unicast"
    static let batchPath = "/server/v1/message/notification/unicast_batch"

    let settings: EmulatorConfiguration.OPPOSettings
    let stats = VendorStats()
    let clock = VendorClock()
    let injector: VendorFaultInjector
    let rate = VendorRate()
    /// auth_token -> app key.
    private let tokens = NIOLockedValueBox<[String: String]>([:])
    /// app_message_id + regId already sent; marketing messages per app per day.
    private let sent = NIOLockedValueBox<Set<String>>([])
    private let quota = NIOLockedValueBox<[String: (day: Int64, count: Int)]>([:])
    let side: OPPOSide

    init(configuration: EmulatorConfiguration) throws {
        settings = configuration.oppo
        injector = VendorFaultInjector(settings.faults)
        side = OPPOSide(stats: stats, clock: clock, injector: injector)
    }

    var faults: VendorFaults { injector.faults }

    func handles(path: String) -> Bool { [Self.authPath, Self.unicastPath, Self.batchPath].contains(path) }

    func isAuthEndpoint(path: String) -> Bool { path == Self.authPath }

    private static func answer(_ code: Int, _ message: String, data: String? = nil) -> String {
        #"{"code":\#(code),"message":"\#(JSONText.escaped(message))""# + (data.map { #","data":\#($0)"# } ?? "") + "}"
    }

    func answer(_ request: IncomingRequest) -> VendorResponse? {
        guard handles(path: request.path) else { return nil }
        let form = FormFields.parse(request.body)
        let json = [("content-type", "application/json;charset=UTF-8")]
        if request.path == Self.authPath { return VendorResponse(status: 200, headers: json, body: auth(form)) }
        let result = send(form, batch: request.path == Self.batchPath)
        stats.record(request, status: 200, code: String(result.code), delivered: result.delivered, refused: result.refused,
                     validatedOnly: false, classification: result.category, second: Int64(clock.now.rounded(.down)))
        return VendorResponse(status: 200, headers: json, body: result.body)
    }

    static func sign(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        _ = bytes.withUnsafeBufferPointer { SHA256($0.baseAddress, $0.count, &digest) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    private func auth(_ form: [String: String]) -> String {
        guard let key = form["app_key"], let app = settings.apps.first(where: { $0.appKey == key }) else {
            stats.tokenRequested(issued: false)
            return Self.answer(14, "Invalid AppKey")
        }
        guard let stamp = form["timestamp"], let millis = Double(stamp), abs(millis / 1000 - clock.now) <= 600 else {
            stats.tokenRequested(issued: false)
            return Self.answer(19, "Invalid Timestamp")
        }
        guard form["sign"] == Self.sign(key + stamp + app.masterSecret) else {
            stats.tokenRequested(issued: false)
            return Self.answer(16, "Invalid Sign")
        }
        let token = "oppo-" + UUID().uuidString
        tokens.withLockedValue { $0[token] = key }
        stats.tokenRequested(issued: true)
        return Self.answer(0, "success", data: #"{"auth_token":"\#(token)","create_time":\#(Int64(clock.now * 1000))}"#)
    }

    private struct Result {
        var code: Int
        var body: String
        var delivered: [String] = []
        var refused = 0
        var category: String?
    }

    private func send(_ form: [String: String], batch: Bool) -> Result {
        guard let token = form["auth_token"], !token.isEmpty else { return Result(code: 29, body: Self.answer(29, "Missing AuthToken")) }
        guard let key = tokens.withLockedValue({ $0[token] }), let app = settings.apps.first(where: { $0.appKey == key }) else {
            return Result(code: 11, body: Self.answer(11, "Invalid AuthToken"))
        }
        let text = batch ? form["messages"] : form["message"]
        let parsed = text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
        let messages: [[String: Any]]
        if batch {
            guard let list = parsed as? [[String: Any]], (1...1000).contains(list.count) else {
                return Result(code: 31, body: Self.answer(31, "messages must hold 1 to 1,000 messages"))
            }
            messages = list
        } else {
            guard let one = parsed as? [String: Any] else { return Result(code: 31, body: Self.answer(31, "message is missing")) }
            messages = [one]
        }
        if injector.faults.flowControl { return Result(code: -2, body: Self.answer(-2, "Service in Flow Control")) }
        if let code = injector.next() { return Result(code: Int(code) ?? -1, body: Self.answer(Int(code) ?? -1, "injected")) }
        if !rate.admit(app: key, tokens: messages.count, now: clock.now, requestsPerSecond: injector.faults.requestsPerSecond,
                       tokensPerSecond: nil) {
            return Result(code: -2, body: Self.answer(-2, "Service in Flow Control"))
        }
        let notification = messages.first?["notification"] as? [String: Any] ?? [:]
        let category = notification["category"] as? String
        if let category, !settings.categories.contains(category) { return Result(code: 67, body: Self.answer(67, "category invalid")) }
        if notification["notify_level"] != nil && category == nil { return Result(code: 67, body: Self.answer(67, "notify_level needs a category")) }
        if category != "IM", let limit = app.dailyQuota {
            let day = Int64((clock.now + 8 * 3600) / 86_400)
            let over = quota.withLockedValue { quota -> Bool in
                var entry: (day: Int64, count: Int) = quota[key].flatMap { $0.day == day ? $0 : nil } ?? (day, 0)
                guard entry.count + messages.count <= limit else { return true }
                entry.count += messages.count
                quota[key] = entry
                return false
            }
            if over { return Result(code: 33, body: Self.answer(33, "The Number Of Messages Exceeds The Daily Limit")) }
        }
        var result = Result(code: 0, body: "", category: category ?? "")
        var items: [String] = []
        for message in messages {
            let regID = message["target_value"] as? String ?? ""
            let id = (message["notification"] as? [String: Any])?["app_message_id"] as? String ?? UUID().uuidString
            let messageID = "\(key)-1-1-\(UUID().uuidString.prefix(8))"
            if settings.invalidPrefixes.contains(where: regID.hasPrefix) {
                result.refused += 1
                if !batch { return Result(code: 10000, body: Self.answer(10000, "Invalid RegistrationId"), refused: 1, category: category ?? "") }
                items.append(#"{"messageId":"\#(messageID)","registrationId":"\#(JSONText.escaped(regID))","errorCode":10000,"errorMessage":"Invalid RegistrationId"}"#)
                continue
            }
            // Once per app_message_id and target: a message sent again is answered as sent, not shown twice.
            if sent.withLockedValue({ $0.insert(id + "\u{1}" + regID).inserted }) { result.delivered.append(regID) }
            items.append(#"{"messageId":"\#(messageID)","registrationId":"\#(JSONText.escaped(regID))"}"#)
        }
        result.body = batch ? Self.answer(0, "Success", data: "[" + items.joined(separator: ",") + "]")
                            : Self.answer(0, "Success", data: #"{"messageId":"\#(key)-1-1-x"}"#)
        return result
    }
}
