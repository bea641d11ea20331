import AndroidPushKit
import ProviderKit
import PushCore

/// Xiaomi MiPush as the scheduler sees it: `POST /v3/message/regid` with a form body
/// (`XiaomiRequestForm`) carrying up to 1,000 regIds of one job, the app's static key as
/// `authorization: key=<AppSecret>`, and the answers read per token (`XiaomiAnswerClassifier`).
///
/// The key is neither a bearer nor renewable, so `authorization()` is `.none` and the key is a header field
/// of the service's own, like the content type: the drivers build a job's headers once and share them
/// (`HeaderCache`), and HTTP/2 drivers send a field named `authorization` as never-indexed. Confined to its
/// scheduler's thread, like every `PushService`; the app's `AppDeliveryRecord` is what its lanes share.
///
/// The key is kept as a `Secret` and the header made from it only when a driver asks, so neither `description`
/// nor reflection (`dump`, a log of the service) ever shows it.
public final class XiaomiService: PushService, CustomStringConvertible, CustomReflectable {
    /// `/v3/message/regid` takes several packages in `restricted_package_name`; `/v2/` one. One app sends one,
    /// and either path takes that.
    public static let sendPath = "/v3/message/regid"
    /// regIds one request may carry (aggregators' figure, and the emulator's).
    public static let maxRegIDsPerRequest = 1000

    public let name = "Xiaomi"
    public let metrics: ServiceMetrics
    public let batchLimit = XiaomiService.maxRegIDsPerRequest
    public let app: XiaomiApp
    private let secret: Secret
    private let quotaDay: QuotaDay
    private let deliveries: AppDeliveryRecord
    private let wallMillis: @Sendable () -> Int64
    /// Where the app's receipts go (`extra.callback`), nil without a `callback_url`.
    private let callbackURL: String?

    /// Reads the app's secret file and `settings.quotaReset`: either failing is an error naming the file or the
    /// value. `deliveries`: shared by the lanes of one app. `wallMillis`: UNIX milliseconds, for the ttl, the
    /// quota day and feedback times (the lane's `TransportClock` in tests that move time).
    public init(app: XiaomiApp, settings: XiaomiSettings, metrics: ServiceMetrics, deliveries: AppDeliveryRecord = AppDeliveryRecord(),
                wallMillis: @escaping @Sendable () -> Int64 = { WallClock.nowMillis() }) throws(XiaomiSetupError) {
        let secret = try XiaomiAppSecret.read(file: app.appSecretFile)
        let quotaDay: QuotaDay
        do {
            quotaDay = try QuotaDay(parsing: settings.quotaReset)
        } catch {
            throw XiaomiSetupError("xiaomi.quota_reset: \(error.description)")
        }
        self.app = app
        self.metrics = metrics
        self.quotaDay = quotaDay
        self.deliveries = deliveries
        self.wallMillis = wallMillis
        self.secret = secret
        callbackURL = app.callbackURL.isEmpty ? nil
            : XiaomiCallbackPath.url(baseURL: app.callbackURL, segment: XiaomiCallbackPath.segment(secret: secret, package: app.package))
    }

    public var description: String { "XiaomiService(app: \(app.topic))" }
    public var customMirror: Mirror { Mirror(self, children: ["app": app.topic], displayStyle: .class) }

    public func authorization() -> Authorization { .none }

    public func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { (Self.sendPath, "") }

    /// Asked once per distinct set of push headers (the drivers cache the block), not per request.
    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] {
        [("content-type", "application/x-www-form-urlencoded;charset=UTF-8"), ("authorization", "key=\(secret.value)")]
    }

    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        let form: XiaomiRequestForm
        if let cached = job.serviceCache as? XiaomiRequestForm {
            form = cached
        } else {
            form = XiaomiRequestForm(fields: XiaomiMessageFields(payload: job.job.payload, headers: job.job.headers, app: app,
                                                                 messageClass: job.messageClass, messageID: job.job.firstSourceID,
                                                                 callbackURL: callbackURL),
                                     expiration: job.job.headers.expiration)
            job.serviceCache = form
        }
        // The wall clock only for the requests whose ttl counts down.
        return .bytes(form.body(tokens: tokens, regIDs: job.job.tokens, nowMillis: form.expiration == nil ? 0 : wallMillis()))
    }

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        let now = wallMillis()
        let answer = XiaomiAnswerClassifier.classify(
            status: status, body: body, retryAfter: retryAfter, tokens: tokens, regIDs: job.job.tokens, nowMillis: now,
            quotaDay: quotaDay)
        if case .configurationRefused(let code, let words) = answer.decision {
            return configurationRefusal(code: code, words: words, job: job, answer: answer)
        }
        return AllTokensRefusedRule.apply(answer, count: tokens.count, record: deliveries, nowMillis: now, service: name)
    }

    /// A refused channel: the app's configuration when the request carried the app's channel for the message's class
    /// (the app pauses, naming the setting), the message's own when its `xiaomi` object chose another (a dead letter).
    private func configurationRefusal(code: String, words: String, job: JobContext, answer: ServiceAnswer) -> ServiceAnswer {
        let configured = app.channelID(for: job.messageClass)
        let sent = XiaomiMessageFields(payload: job.job.payload, headers: job.job.headers, app: app,
                                       messageClass: job.messageClass).value("extra.channel_id") ?? ""
        guard sent == configured else {
            return ServiceAnswer(.deadLetter(reason: code, detail: words), reason: answer.reason)
        }
        let key = XiaomiApp.channelKey(for: job.messageClass)
        let detail = "Xiaomi: \(words); check \(key) of the app \(app.topic) (\(configured.isEmpty ? "none set" : configured))"
        return ServiceAnswer(.configurationRefused(reason: code, detail: detail), reason: answer.reason)
    }

    /// Nothing to renew: the key is static. The scheduler asks only after a renew decision, which this service
    /// never gives.
    public func renew(generation: Int) {}
}
