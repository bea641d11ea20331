import PushCore

/// The default provider's messages (docs/message-format.md): the payload as Apple takes it (`aps`), `push_type` with
/// the topic suffix Apple requires for it, priorities as Apple allows them, hex or Base64 device tokens, 4 KB (5 KB
/// for VoIP). `ProviderDescription.parse`: the parser checks the fields every message has and hands the rest here;
/// it takes these rules once, when it is made, since they read nearly every message.
struct APNsMessageRules: ProviderMessageRules {
    static let pushTypes: Set<String> = [
        "alert", "background", "voip", "complication", "fileprovider", "mdm", "location",
        "liveactivity", "pushtotalk", "widgets", "controls",
    ]
    /// apns-topic suffixes Apple requires for these push types.
    static let topicSuffixes: [String: String] = [
        "voip": ".voip", "complication": ".complication", "fileprovider": ".pushkit.fileprovider",
        "location": ".location-query", "liveactivity": ".push-type.liveactivity", "pushtotalk": ".voip-ptt",
        "widgets": ".push-type.widgets",
    ]
    /// A payload whose `aps` holds only `content-available` is a background push when no `push_type` says otherwise.
    static let contentAvailableOnly = PayloadMemberProbe(key: "aps", member: "content-available")

    func parse(_ element: ProviderElement) throws(MessageParser.Problem) -> ParsedElement {
        guard let payloadValue = element.payload else { throw MessageParser.Problem("payload is missing") }
        guard payloadValue.objectMembers != nil else { throw MessageParser.Problem("payload is not a JSON object") }

        let pushType = try Self.pushType(element)
        let priority = try Self.priority(element, pushType: pushType)
        let expiration = try element.expiration()
        let collapseID = try element.collapseID()
        let enqueuedAt = try element.enqueuedAt()

        let body = element.keptPayload ?? JSONWriter.canonical(payloadValue)
        let limit = pushType == "voip" ? 5120 : 4096
        guard body.count <= limit else {
            throw MessageParser.Problem("payload is \(body.count) bytes, over the \(limit)-byte limit for \(pushType)")
        }

        let (tokens, rejected) = try element.tokens(notA: "hex or base64") { DeviceToken.normalize($0) }

        var apnsTopic = element.topic
        var appTopic = element.topic
        // "alert" (nearly every message) has no suffix: compared, not hashed into the table.
        if pushType != "alert", let suffix = Self.topicSuffixes[pushType] {
            if apnsTopic.hasSuffix(suffix) { appTopic = String(apnsTopic.dropLast(suffix.count)) } else { apnsTopic += suffix }
        }
        guard apnsTopic.utf8.count <= MessageLimits.maxTopicBytes else {
            throw MessageParser.Problem("topic with the \(pushType) suffix is over \(MessageLimits.maxTopicBytes) bytes")
        }

        let headers = PushHeaders(topic: apnsTopic, appTopic: appTopic, pushType: pushType, priority: priority,
                                  expiration: expiration, collapseID: collapseID, provider: element.provider)
        if headers.isExpired(nowSeconds: element.now) { throw MessageParser.Problem(reason: "Expired") }
        return element.valid(headers: headers, payload: body, tokens: tokens, rejected: rejected, enqueuedAtMillis: enqueuedAt)
    }

    /// `push_type`, or without one "background" for a payload whose `aps` holds only `content-available`.
    private static func pushType(_ element: ProviderElement) throws(MessageParser.Problem) -> String {
        if let value = element.pushType {
            guard let text = value.stringValue, pushTypes.contains(text) else {
                throw MessageParser.Problem("push_type must be one of \(pushTypes.sorted().joined(separator: ", "))")
            }
            return text
        }
        return element.payloadMemberHasOnly(contentAvailableOnly) ? "background" : "alert"
    }

    /// `priority`, 10 unless given, 5 for a background push, which may not have 10.
    private static func priority(_ element: ProviderElement, pushType: String) throws(MessageParser.Problem) -> Int {
        guard let priority = try element.priority() else { return pushType == "background" ? 5 : 10 }
        if pushType == "background" && priority == 10 {
            throw MessageParser.Problem("priority 10 is not allowed for background pushes (Apple requires 5)")
        }
        return priority
    }
}
