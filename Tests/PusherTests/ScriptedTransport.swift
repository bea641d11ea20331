import APNsProvider
import Foundation
import ProviderKit
import PushCore
@testable import Pusher
import XCTest

/// A driver that sends nothing: it records what the scheduler starts and cancels, completes requests when a test
/// says so, and lets the scheduler's loop run only when a test steps it (`step`), so that a test moves the
/// scheduler and a `ManualTransportClock` in turns and never waits for time to pass.
final class ScriptedDriver: TransportDriver, @unchecked Sendable {
    struct Start {
        let id: Int
        /// The request's first token (the only one unless the service takes a list).
        let token: String
        /// Every token of the request, in the order it lists them.
        let tokens: [String]
        /// The scheduler's clock when it started the request (`DriverRequest.now`).
        let at: UInt64
    }

    // Everything below is guarded by `condition`: the scheduler's thread and the test's both use it.
    private let condition = NSCondition()
    private var started: [Start] = []
    private var onWire: [Int: UInt64] = [:]
    private var cancelledIDs: [Int] = []
    private var pending: [DriverCompletion] = []
    /// `wake` was called and the loop has not yet taken it.
    private var woken = false
    /// The loop sleeps in `wait` until it is woken.
    private var sleeping = false
    /// Calls of `wait`: one per turn of the loop.
    private var turns = 0

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    // MARK: the scheduler's side

    func room(limit: Int) -> Int { limit }

    func start(_ request: DriverRequest) {
        locked {
            var tokens: [String] = []
            request.tokens.forEach { _, index in tokens.append(request.job.job.tokens[index]) }
            started.append(Start(id: request.id, token: tokens[0], tokens: tokens, at: request.now))
            onWire[request.id] = request.now
        }
    }

    func cancel(id: Int) {
        locked {
            onWire[id] = nil
            cancelledIDs.append(id)
        }
    }

    func onWireSince(id: Int) -> UInt64? { locked { onWire[id] } }

    func process(into completions: inout [DriverCompletion]) {
        let ready = locked { () -> [DriverCompletion] in
            defer { pending = [] }
            return pending
        }
        completions += ready
    }

    /// Sleeps until woken, whatever the timeout: time passes only when the test moves the clock.
    func wait(timeoutMillis: Int32) {
        condition.lock()
        defer { condition.unlock() }
        turns += 1
        while !woken {
            sleeping = true
            condition.broadcast()
            condition.wait()
        }
        sleeping = false
        woken = false
    }

    func wake() {
        locked {
            woken = true
            condition.broadcast()
        }
    }

    func close() -> [Int] { locked { Array(onWire.keys) } }
    func noteWaitingWork(_ waiting: Bool) {}
    var openConnections: Int { 1 }
    var streamsLimit: Int? { nil }

    // MARK: the test's side

    var starts: [Start] { locked { started } }
    var cancelled: [Int] { locked { cancelledIDs } }
    var inFlight: [Int] { locked { onWire.keys.sorted() } }

    /// The request `id` is answered with `status` (and a `retry-after` value); the next turn takes it.
    func answer(_ id: Int, status: Int, body: String = "", retryAfter: String? = nil) {
        locked {
            onWire[id] = nil
            pending.append(DriverCompletion(id: id, result: .answered(status: status, body: Array(body.utf8), wireMicros: 1000,
                                                                      retryAfter: retryAfter)))
        }
    }

    /// Returns once a whole turn of the scheduler's loop has run that began after this call: what it read from
    /// the clock and the driver is what the test had set up. Waits for the event, not for time (the deadline
    /// only turns a scheduler that stopped into a failure rather than a hang).
    func step(file: StaticString = #filePath, line: UInt = #line) {
        condition.lock()
        defer { condition.unlock() }
        let before = turns
        woken = true
        condition.broadcast()
        let deadline = Date().addingTimeInterval(30)
        // Woken while in a turn, the loop finishes it, takes the wake at once and runs a whole turn more before
        // it sleeps; asleep, it runs one. Either way: a later turn, asleep again, the wake taken.
        while !(turns > before && sleeping && !woken) {
            if !condition.wait(until: deadline) {
                XCTFail("the scheduler's loop did not come round", file: file, line: line)
                return
            }
        }
    }
}

/// A push service with fixed answers: 200 delivered; 503 a retry (`retry-after` in milliseconds, if given); 429
/// a retry that holds the whole service for the `retry-after` milliseconds; 403 a refused credential; 401 a
/// credential rejected before the message was read (renew and send again).
final class ScriptedService: PushService {
    let name = "Scripted"
    let metrics = ServiceMetrics.of(.apns)

    func authorization() -> Authorization { .none }
    func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { ("/3/device/", job.job.tokens[tokens.first]) }
    func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] { [] }
    func body(for job: JobContext, tokens: RequestTokens) -> RequestBody { .payload }
    func renew(generation: Int) {}

    func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
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
/// 10034); other statuses as `ScriptedService`.
final class ScriptedListService: PushService {
    let name = "ScriptedList"
    let metrics = ServiceMetrics.of(.apns)
    let batchLimit: Int
    /// What `prepare` answers, in turn, before the requests it lets go (nil: send); empty: every request goes.
    var preparations: [ServiceAnswer?] = []
    /// The token lists `prepare` was asked about.
    private(set) var prepared: [[String]] = []

    init(batchLimit: Int) { self.batchLimit = batchLimit }

    func prepare(for job: JobContext, tokens: RequestTokens) -> ServiceAnswer? {
        var listed: [String] = []
        tokens.forEach { _, index in listed.append(job.job.tokens[index]) }
        prepared.append(listed)
        return preparations.isEmpty ? nil : preparations.removeFirst()
    }

    func authorization() -> Authorization { .none }
    func path(for job: JobContext, tokens: RequestTokens) -> (fixed: String, suffix: String) { ("/send", "") }
    func headerFields(for job: JobContext, bearer: String?) -> [(name: String, value: String)] { [] }
    func body(for job: JobContext, tokens: RequestTokens) -> RequestBody {
        var listed: [String] = []
        tokens.forEach { _, index in listed.append(job.job.tokens[index]) }
        return .bytes(Array(listed.joined(separator: ",").utf8))
    }
    func renew(generation: Int) {}

    func classify(status: Int, body: [UInt8], retryAfter: String?, job: JobContext, tokens: RequestTokens) -> ServiceAnswer {
        guard status == 200 else {
            return ScriptedService().classify(status: status, body: body, retryAfter: retryAfter, job: job, tokens: tokens)
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
