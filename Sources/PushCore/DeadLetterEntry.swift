import Foundation

/// A dead letter of docs/redis-keys.md, and the one place its JSON is built: by the collector for a malformed
/// element, by the acknowledger for a message that failed (`DeadLetterDraft`), and, through `framingAroundRaw`,
/// by the recovery script for a poison message. Field names are public API.
public struct DeadLetterEntry: Sendable, Equatable {
    /// The tokens that failed this way (the record's `message.tokens`); nil keeps the element's own.
    public var failedTokens: [String]?
    public var reason: String
    public var status: Int?
    public var attempts: Int
    public var failedAtMillis: Int64
    public var worker: String
    /// How many holders died with the message (poison messages only).
    public var deliveries: Int?
    /// The service's own words about the failure (an error message), where `reason` is its bare code.
    public var detail: String?

    public init(failedTokens: [String]?, reason: String, status: Int?, attempts: Int, failedAtMillis: Int64,
                worker: String, deliveries: Int? = nil, detail: String? = nil) {
        self.detail = detail
        self.failedTokens = failedTokens
        self.reason = reason
        self.status = status
        self.attempts = attempts
        self.failedAtMillis = failedAtMillis
        self.worker = worker
        self.deliveries = deliveries
    }

    /// The record for `raw`, the element exactly as claimed. If it parses (within `maxDepth`), `message` is that
    /// object with `tokens` replaced by `failedTokens`; otherwise `message` is null and `raw` holds the element as
    /// text, plus `raw_base64` when it is not valid UTF-8, so not one byte of it is lost. A message with
    /// `"provider": "<name>"` gives the record `"provider": "<name>"` too (docs/redis-keys.md), whoever writes it and
    /// whatever the reason, malformed messages included.
    public func record(element raw: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> [UInt8] {
        recordAndProvider(element: raw, maxDepth: maxDepth).record
    }

    /// `record(element:)`, and the provider the element names: the one its `"provider"` names when it is a JSON
    /// object naming a provider other than the default one (a registered module), the default provider otherwise (all
    /// that can be said of an element that does not parse), for a caller that counts the dead letter under its provider
    /// without parsing the element again.
    public func recordAndProvider(element raw: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> (record: [UInt8], provider: PushProvider) {
        var record = ownMembers
        var provider = PushProvider.default
        if let parsed = try? JSONParser.parse(raw, maxDepth: maxDepth), var members = parsed.objectMembers {
            if let named = members.first(where: { $0.key == "provider" })?.value.stringValue,
               let known = PushProvider(rawValue: named), known != .default {
                provider = known
                record.append(JSONMember(key: "provider", value: .string(known.rawValue)))
            }
            if let failedTokens {
                members.removeAll { $0.key == "tokens" }
                members.append(JSONMember(key: "tokens", value: .array(failedTokens.map { .string($0) })))
            }
            record.append(JSONMember(key: "message", value: .object(members)))
        } else {
            record.append(JSONMember(key: "message", value: .null))
            record.append(JSONMember(key: "raw", value: .string(String(decoding: raw, as: UTF8.self))))
            if String(validating: raw, as: UTF8.self) == nil {
                record.append(JSONMember(key: "raw_base64", value: .string(Data(raw).base64EncodedString())))
            }
        }
        return (JSONWriter.canonical(.object(record)), provider)
    }

    /// The record of an element that is not parsed (`message` null), in two parts for a writer that has the
    /// element where this code is not (the recovery script inside Redis): `before + rawMembers + after`, where
    /// `rawMembers` is `"raw":...` (and `,"raw_base64":...`), is the record `record(element:)` makes of an
    /// element that does not parse. Members in key order: those before `raw` in the first part, the rest after.
    public func framingAroundRaw() -> (before: [UInt8], after: [UInt8]) {
        let members = ownMembers + [JSONMember(key: "message", value: .null)]
        let (early, late) = (members.filter { JSONWriter.precedes($0.key, "raw") },
                             members.filter { !JSONWriter.precedes($0.key, "raw") })
        var before = JSONWriter.canonical(.object(early))
        before.removeLast()  // "}"
        before.append(UInt8(ascii: ","))
        var after = JSONWriter.canonical(.object(late))
        after[0] = UInt8(ascii: ",")  // "{"
        return (before, after)
    }

    /// Everything but `message`, `raw` and `provider`, which depend on the element.
    private var ownMembers: [JSONMember] {
        var members = [
            JSONMember(key: "reason", value: .string(reason)),
            JSONMember(key: "status", value: status.map { .number(String($0)) } ?? .null),
            JSONMember(key: "attempts", value: .number(String(attempts))),
            JSONMember(key: "failed_at", value: .number(String(failedAtMillis))),
            JSONMember(key: "worker", value: .string(worker)),
        ]
        if let deliveries { members.append(JSONMember(key: "deliveries", value: .number(String(deliveries)))) }
        if let detail { members.append(JSONMember(key: "detail", value: .string(detail))) }
        return members
    }
}
