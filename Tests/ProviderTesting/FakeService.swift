import ProviderKit
import PushCore

/// A push service with fixed answers: 200 delivered; 503 a retry (`retry-after` in milliseconds, if given); 429
/// a retry that holds the whole service for the `retry-after` milliseconds; 403 a refused credential; 401 a
/// credential rejected before the message was read (renew and send again).
public final class FakeService: PushService {
    public init() {}

    public let name = "Fake"
    public let metrics = ServiceMetrics.of(FakeModule.provider)

    public func authorization() -> Authorization { .none }
    public func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { ("/fake/send/", job.job.tokens[tokens.first]) }
    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] { [] }
    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody { .payload }
    public func renew(generation: Int) {}

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        let asked = retryAfter.flatMap { Int64($0) }
        switch status {
        case 200: return ServiceAnswer(.delivered, reason: "")
        case 429: return ServiceAnswer(.retry(reason: "TooManyRequests", notBeforeMillis: asked, holdService: true), reason: "TooManyRequests")
        case 403: return ServiceAnswer(.credentialRefused(reason: "InvalidProviderToken"), reason: "InvalidProviderToken")
        case 401: return ServiceAnswer(.renewAndResend(reason: "Unauthenticated"), reason: "Unauthenticated")
        default: return ServiceAnswer(.retry(reason: "ServiceUnavailable", notBeforeMillis: asked), reason: "ServiceUnavailable")
        }
    }
}

/// A push service that takes lists of up to `batchLimit` tokens, as Huawei and Xiaomi do, and answers in their
/// manner: a 200 whose body names the tokens that did not go, `dead=a,b;busy=c` (dead ones to feedback,
/// busy ones to retry), every other token of the request delivered; a 200 saying `slow` retries the whole request
/// as over the app's rate (Xiaomi's 10027); `quota until <wall ms>` says the day's quota is spent until then (Xiaomi's
/// 10034); other statuses as `FakeService`.
public final class FakeListService: PushService {
    public let name = "FakeList"
    public let metrics = ServiceMetrics.of(FakeModule.provider)
    public let batchLimit: Int
    /// What `prepare` answers, in turn, before the requests it lets go (nil: send); empty: every request goes.
    public var preparations: [ServiceAnswer?] = []
    /// The token lists `prepare` was asked about.
    public private(set) var prepared: [[String]] = []

    public init(batchLimit: Int) { self.batchLimit = batchLimit }

    public func prepare(for job: JobContext, tokens: RequestTokens) -> ServiceAnswer? {
        var listed: [String] = []
        tokens.forEach { _, index in listed.append(job.job.tokens[index]) }
        prepared.append(listed)
        return preparations.isEmpty ? nil : preparations.removeFirst()
    }

    public func authorization() -> Authorization { .none }
    public func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { ("/send", "") }
    public func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] { [] }
    public func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        var listed: [String] = []
        tokens.forEach { _, index in listed.append(job.job.tokens[index]) }
        return .bytes(Array(listed.joined(separator: ",").utf8))
    }
    public func renew(generation: Int) {}

    public func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        guard status == 200 else {
            return FakeService().classify(status: status, body: body, retryAfter: retryAfter, job: job, tokens: tokens)
        }
        if body == Array("slow".utf8) { return ServiceAnswer(.retry(reason: "OverRate"), reason: "OverRate", overRate: true) }
        if let text = String(validating: body, as: UTF8.self), text.hasPrefix("quota until "), let until = Int64(text.dropFirst(12)) {
            return ServiceAnswer(.quotaSpent(reason: "QuotaSpent", untilWallMillis: until), reason: "QuotaSpent")
        }
        var named: [String: ServiceDecision] = [:]
        for part in String(decoding: body, as: UTF8.self).split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let decision: ServiceDecision = pair[0] == "dead"
                ? .feedback(reason: "Unregistered", timestampMillis: 0) : .retry(reason: "Busy")
            for token in pair[1].split(separator: ",") { named[String(token)] = decision }
        }
        var exceptions: [(position: Int, decision: ServiceDecision)] = []
        tokens.forEach { position, index in
            if let decision = named[job.job.tokens[index]] { exceptions.append((position, decision)) }
        }
        return ServiceAnswer(.delivered, reason: "", exceptions: exceptions)
    }
}
