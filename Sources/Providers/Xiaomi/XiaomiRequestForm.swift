import AndroidPushKit
import ProviderKit
import PushCore

/// The body of a job's MiPush requests, made once per job (`JobContext.serviceCache`) and shared by its
/// requests and retries: the message's fields encoded (`prefix`), then per request `time_to_live` (the time left
/// at that send, so time spent in queues and retries is not promised to the device again) and
/// `registration_id`, the request's tokens joined by commas. A request costs a copy of the prefix and its tokens;
/// no JSON is read per request.
///
/// The commas between regIds are sent as they are, as in Xiaomi's own example (`registration_id=R1,R2`): a form
/// decoder gives the same list from `,` and from `%2C`, and a server that splits before it decodes sees the
/// list only from the bare comma. A regId holds no comma (the message parser refuses one: it would add a target).
final class XiaomiRequestForm {
    /// The shortest `time_to_live` sent: a message whose expiration has just passed still gets a second (the
    /// scheduler drops the ones already expired before they are sent).
    static let minTimeToLiveMillis: Int64 = 1000
    /// The longest: 10 days, the longest Xiaomi keeps a message for an offline device (private messages; public
    /// ones a day). Longer promises nothing more and might be refused (Xiaomi documents no maximum).
    static let maxTimeToLiveMillis: Int64 = 864_000_000

    /// `name=value&...` of the message's fields, without a trailing `&`.
    let prefix: [UInt8]
    /// The nonzero expiration (UNIX seconds) each request counts its `time_to_live` from; nil when none is sent
    /// per request (no expiration, 0, or a `time_to_live` the `xiaomi` object set itself).
    let expiration: Int64?

    init(fields: XiaomiMessageFields, expiration: Int64?) {
        var prefix: [UInt8] = []
        prefix.reserveCapacity(fields.fields.reduce(0) { $0 + 2 + FormEncoding.length(of: $1.name) + FormEncoding.length(of: $1.value) })
        for field in fields.fields { FormEncoding.appendField(field.name, field.value, to: &prefix) }
        self.prefix = prefix
        if let expiration, expiration != 0, fields.value("time_to_live") == nil {
            self.expiration = expiration
        } else {
            self.expiration = nil
        }
    }

    /// The whole body for `tokens` (indices into `regIDs`, the job's tokens) at `nowMillis`.
    func body(tokens: RequestTokens, regIDs: [String], nowMillis: Int64) -> [UInt8] {
        var length = prefix.count + 64
        tokens.forEach { _, index in length += FormEncoding.length(of: regIDs[index]) + 1 }
        var out: [UInt8] = []
        out.reserveCapacity(length)
        out += prefix
        if let expiration {
            FormEncoding.appendField("time_to_live", String(Self.timeToLiveMillis(expiration: expiration, nowMillis: nowMillis)), to: &out)
        }
        if !out.isEmpty { out.append(UInt8(ascii: "&")) }
        out += Self.registrationIDKey
        tokens.forEach { position, index in
            if position > 0 { out.append(UInt8(ascii: ",")) }
            FormEncoding.append(regIDs[index], to: &out)
        }
        return out
    }

    /// Milliseconds from `nowMillis` to `expiration` (UNIX seconds), within `minTimeToLiveMillis` and
    /// `maxTimeToLiveMillis`; checked arithmetic, so an absurd expiration is the longest or the shortest.
    static func timeToLiveMillis(expiration: Int64, nowMillis: Int64) -> Int64 {
        let (expiresMillis, tooFar) = expiration.multipliedReportingOverflow(by: 1000)
        if tooFar { return expiration > 0 ? maxTimeToLiveMillis : minTimeToLiveMillis }
        let (left, overflow) = expiresMillis.subtractingReportingOverflow(nowMillis)
        if overflow { return expiresMillis > 0 ? maxTimeToLiveMillis : minTimeToLiveMillis }
        return min(max(left, minTimeToLiveMillis), maxTimeToLiveMillis)
    }

    private static let registrationIDKey = Array("registration_id=".utf8)
}
