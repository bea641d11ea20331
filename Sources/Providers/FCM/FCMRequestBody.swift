import PushCore

/// The body of one FCM send request (docs/fcm.md): `{"message":{<payload members>,"token":"<token>"}}`.
/// Made once per job: everything before the token (`prefix`) and after it (`suffix`) is the same for every
/// token, so a request costs a copy of the prefix, the token and three bytes, and no JSON is read or written
/// per token (the path to Apple's service likewise sends a job's payload bytes as they are).
///
/// The payload must be one `MessageParser` made for FCM: canonical JSON holding only FCM's message fields
/// (so `android`, the first of them in byte order, is the first member when present), and without
/// `android.ttl` where the expiration is nonzero. The seconds left until a nonzero expiration become
/// `android.ttl` here, when the body is made, not when the message was parsed: time spent in the window,
/// the queues and retries is not promised to the device again.
public struct FCMRequestBody: Sendable {
    /// `{"message":{…the payload's members…,"token":"`
    public let prefix: [UInt8]
    /// `"}}`
    public static let suffix: [UInt8] = Array(#""}}"#.utf8)
    /// FCM's longest time to live (4 weeks); a later expiration is sent as this.
    public static let maxTTLSeconds: Int64 = 2_419_200

    public init(payload: [UInt8], expiration: Int64?, nowSeconds: Int64) {
        var prefix: [UInt8] = []
        prefix.reserveCapacity(Self.prefixCapacity(payload: payload))
        Self.appendPrefix(payload: payload, expiration: expiration, nowSeconds: nowSeconds, to: &prefix)
        self.prefix = prefix
    }

    /// The whole body for one token, made at once without a prefix to keep: for a job of one token (most chat
    /// pushes), where a prefix made, cached and freed for its single request cost an allocation and a copy more.
    public static func body(payload: [UInt8], expiration: Int64?, nowSeconds: Int64, token: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(prefixCapacity(payload: payload) + token.utf8.count + suffix.count)
        appendPrefix(payload: payload, expiration: expiration, nowSeconds: nowSeconds, to: &out)
        appendToken(token, to: &out)
        return out
    }

    /// Enough for the prefix of `payload` (its ttl, when any, at most 32 bytes with its key).
    private static func prefixCapacity(payload: [UInt8]) -> Int {
        messageOpen.count + payload.count + androidOpen.count + 32 + tokenKey.count
    }

    /// `{"message":{…the payload's members…,"token":"` appended to `prefix`.
    private static func appendPrefix(payload: [UInt8], expiration: Int64?, nowSeconds: Int64, to prefix: inout [UInt8]) {
        // The payload's members without the braces (an object that is not `{…}` counts as empty).
        var members: ArraySlice<UInt8> = []
        if payload.count >= 2, payload.first == UInt8(ascii: "{"), payload.last == UInt8(ascii: "}") {
            members = payload[1..<(payload.count - 1)]
        }
        prefix += Self.messageOpen
        if let expiration, expiration != 0 {
            // `android` sorts first among FCM's fields, so in a canonical payload it is first or absent: the
            // ttl goes in right after its opening brace (key order means nothing to JSON), found without a scan.
            prefix += Self.androidOpen
            prefix += Array("\"ttl\":\"\(Self.ttlSeconds(expiration: expiration, nowSeconds: nowSeconds))s\"".utf8)
            if members.starts(with: Self.androidOpen) {
                members = members.dropFirst(Self.androidOpen.count)
                if members.first != UInt8(ascii: "}") { prefix.append(UInt8(ascii: ",")) }
            } else {
                prefix.append(UInt8(ascii: "}"))
                if !members.isEmpty { prefix.append(UInt8(ascii: ",")) }
            }
        }
        prefix += members
        if prefix.last != UInt8(ascii: "{") { prefix.append(UInt8(ascii: ",")) }
        prefix += Self.tokenKey
    }

    /// The body of the job's requests, with `android.ttl` as of `nowSeconds`.
    public init(job: borrowing PushJob, nowSeconds: Int64) {
        self.init(payload: job.payload, expiration: job.headers.expiration, nowSeconds: nowSeconds)
    }

    /// The whole body for one token.
    public func body(token: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(prefix.count + token.utf8.count + Self.suffix.count)
        append(token: token, to: &out)
        return out
    }

    /// Appends the whole body for one token to `out`.
    public func append(token: String, to out: inout [UInt8]) {
        out += prefix
        Self.appendToken(token, to: &out)
    }

    /// The token (escaped if it had to be, which a valid one never does) and `"}}`.
    private static func appendToken(_ token: String, to out: inout [UInt8]) {
        let utf8 = token.utf8
        let plain = utf8.withContiguousStorageIfAvailable { $0.allSatisfy(Self.needsNoEscape) } ?? utf8.allSatisfy(Self.needsNoEscape)
        if plain {
            out += utf8
        } else {
            // Never for a token the parser accepted (`FCMToken`); escaped all the same, so the body stays JSON.
            var quoted: [UInt8] = []
            JSONWriter.writeString(token, into: &quoted)
            out += quoted.dropFirst().dropLast()
        }
        out += Self.suffix
    }

    /// The ttl in whole seconds for an absolute expiration (UNIX seconds, nonzero) at `nowSeconds`: the seconds
    /// left, 0 once it has passed, at most `maxTTLSeconds`. 0 for an expiration of 0 (deliver now or drop).
    public static func ttlSeconds(expiration: Int64, nowSeconds: Int64) -> Int64 {
        guard expiration != 0 else { return 0 }
        let (left, overflow) = expiration.subtractingReportingOverflow(nowSeconds)
        if overflow { return nowSeconds < 0 ? maxTTLSeconds : 0 }
        return min(max(left, 0), maxTTLSeconds)
    }

    private static func needsNoEscape(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static let messageOpen = Array(#"{"message":{"#.utf8)
    private static let androidOpen = Array(#""android":{"#.utf8)
    private static let tokenKey = Array(#""token":""#.utf8)
}
