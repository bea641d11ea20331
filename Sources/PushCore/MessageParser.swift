import Foundation

/// What one queue element turned out to be.
public enum ParsedElement: Sendable {
    /// A message to push. `rejectedTokens` are the producer's tokens that are neither hex nor Base64:
    /// they go to feedback as `BadDeviceToken` while the rest are sent.
    case valid(PushMessage, rejectedTokens: [String])
    /// The element cannot be pushed; `reason` names the field and the problem (it becomes the dead letter's reason).
    case invalid(reason: String)
}

/// Validates queue elements against SPEC section 2.
public struct MessageParser: Sendable {
    public static let pushTypes: Set<String> = [
        "alert", "background", "voip", "complication", "fileprovider", "mdm", "location",
        "liveactivity", "pushtotalk", "widgets", "controls",
    ]
    /// apns-topic suffixes Apple requires for these push types.
    public static let topicSuffixes: [String: String] = [
        "voip": ".voip", "complication": ".complication", "fileprovider": ".pushkit.fileprovider",
        "location": ".location-query", "liveactivity": ".push-type.liveactivity", "pushtotalk": ".voip-ptt",
        "widgets": ".push-type.widgets",
    ]
    public static let maxTokens = 10_000

    public init() {}

    /// - Parameter now: UNIX seconds, used for relative (`"+N"`) and past expirations.
    public func parse(_ raw: [UInt8], seq: UInt64, now: Int64) -> ParsedElement {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(raw), options: [])
        } catch {
            return .invalid(reason: "Malformed: not JSON")
        }
        guard let fields = object as? [String: Any] else {
            return .invalid(reason: "Malformed: not a JSON object")
        }
        do {
            return try parse(fields, seq: seq, now: now)
        } catch let problem as Problem {
            return .invalid(reason: problem.reason)
        } catch {
            return .invalid(reason: "Malformed: \(error)")
        }
    }

    private struct Problem: Error {
        let reason: String
        init(_ text: String) { reason = "Malformed: \(text)" }
        init(reason: String) { self.reason = reason }
    }

    private func parse(_ fields: [String: Any], seq: UInt64, now: Int64) throws -> ParsedElement {
        guard let idValue = fields["id"] else { throw Problem("id is missing") }
        guard let id = idValue as? String else { throw Problem("id is not a string") }
        guard (1...128).contains(id.count) else { throw Problem("id must be 1..128 characters") }

        var kind = MessageKind.private
        if let value = fields["kind"] {
            guard let text = value as? String, let parsed = MessageKind(rawValue: text) else {
                throw Problem("kind must be \"private\", \"group\" or \"system\"")
            }
            kind = parsed
        }
        var uuid: String?
        if let value = fields["uuid"] {
            guard let text = value as? String else { throw Problem("uuid is not a string") }
            uuid = text
        }
        guard let topicValue = fields["topic"] else { throw Problem("topic is missing") }
        guard let topic = topicValue as? String, !topic.isEmpty,
              !topic.contains(where: { $0.isWhitespace || $0.isNewline })
        else { throw Problem("topic must be a non-empty bundle id") }

        guard let payloadValue = fields["payload"] else { throw Problem("payload is missing") }
        guard let payload = payloadValue as? [String: Any] else { throw Problem("payload is not a JSON object") }

        let pushType = try pushType(fields["push_type"], payload: payload)
        let priority = try priority(fields["priority"], pushType: pushType)
        let expiration = try expiration(fields["expiration"], now: now)

        var collapseID: String?
        if let value = fields["collapse_id"] {
            guard let text = value as? String else { throw Problem("collapse_id is not a string") }
            guard text.utf8.count <= 64 else { throw Problem("collapse_id is \(text.utf8.count) bytes, over 64") }
            collapseID = text
        }
        var enqueuedAt: Int64?
        if let value = fields["enqueued_at"] {
            guard let number = Self.integer(value) else { throw Problem("enqueued_at is not an integer") }
            enqueuedAt = number
        }

        let body = try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys, .withoutEscapingSlashes])
        let limit = pushType == "voip" ? 5120 : 4096
        guard body.count <= limit else {
            throw Problem("payload is \(body.count) bytes, over the \(limit)-byte limit for \(pushType)")
        }

        guard let tokenValue = fields["tokens"] else { throw Problem("tokens is missing") }
        guard let tokenList = tokenValue as? [Any] else { throw Problem("tokens is not an array") }
        guard !tokenList.isEmpty else { throw Problem("tokens is empty") }
        guard tokenList.count <= Self.maxTokens else {
            throw Problem("tokens has \(tokenList.count) entries, over \(Self.maxTokens)")
        }
        var tokens: [String] = []
        tokens.reserveCapacity(tokenList.count)
        var rejected: [String] = []
        var firstRejected: Int?
        var seen = Set<String>()
        for (index, value) in tokenList.enumerated() {
            guard let text = value as? String else { throw Problem("tokens[\(index)] is not a string") }
            if let token = DeviceToken.normalize(text) {
                if tokenList.count > 1 {
                    // A token listed twice is sent once.
                    guard seen.insert(token).inserted else { continue }
                }
                tokens.append(token)
            } else {
                rejected.append(text)
                if firstRejected == nil { firstRejected = index }
            }
        }
        // One bad token among good ones is the device's problem (feedback); no good token at all is the producer's.
        if tokens.isEmpty, let index = firstRejected { throw Problem("tokens[\(index)] is not hex or base64") }

        var apnsTopic = topic
        if let suffix = Self.topicSuffixes[pushType], !topic.hasSuffix(suffix) { apnsTopic += suffix }
        var appTopic = topic
        if let suffix = Self.topicSuffixes[pushType], topic.hasSuffix(suffix) { appTopic = String(topic.dropLast(suffix.count)) }

        let headers = PushHeaders(topic: apnsTopic, appTopic: appTopic, pushType: pushType, priority: priority,
                                  expiration: expiration, collapseID: collapseID)
        if headers.isExpired(nowSeconds: now) { return .invalid(reason: "Expired") }
        let message = PushMessage(seq: seq, id: id, kind: kind, uuid: uuid, headers: headers,
                                  payload: Array(body), tokens: tokens, enqueuedAtMillis: enqueuedAt)
        return .valid(message, rejectedTokens: rejected)
    }

    private func pushType(_ value: Any?, payload: [String: Any]) throws -> String {
        if let value {
            guard let text = value as? String, Self.pushTypes.contains(text) else {
                throw Problem("push_type must be one of \(Self.pushTypes.sorted().joined(separator: ", "))")
            }
            return text
        }
        if let aps = payload["aps"] as? [String: Any], aps.count == 1, aps["content-available"] != nil {
            return "background"
        }
        return "alert"
    }

    private func priority(_ value: Any?, pushType: String) throws -> Int {
        guard let value else { return pushType == "background" ? 5 : 10 }
        guard let number = Self.integer(value), [10, 5, 1].contains(number) else {
            throw Problem("priority must be 10, 5 or 1")
        }
        if pushType == "background" && number == 10 {
            throw Problem("priority 10 is not allowed for background pushes (Apple requires 5)")
        }
        return Int(number)
    }

    private func expiration(_ value: Any?, now: Int64) throws -> Int64 {
        guard let value else { return 0 }
        if let text = value as? String {
            guard text.hasPrefix("+"), let offset = Int64(text.dropFirst()), offset >= 0 else {
                throw Problem("expiration string must be \"+N\" (seconds from now)")
            }
            return now + offset
        }
        guard let number = Self.integer(value), number >= 0 else {
            throw Problem("expiration must be UNIX seconds or \"+N\"")
        }
        return number
    }

    static func integer(_ value: Any) -> Int64? {
        if value is String || value is Bool && !(value is NSNumber) { return nil }
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double, abs(double) < 9.0e15 else { return nil }
        return Int64(double)
    }
}
