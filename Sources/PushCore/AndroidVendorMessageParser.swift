/// The rules of docs/message-format.md for a message to one of China's Android vendors (a registered provider
/// module, `PushProvider.vendorRules`): one payload shape for every vendor (Firebase's), so a producer writes one:
/// `notification` (`title`, `body`, `image`), `data` (string values), and an object named after the vendor whose
/// fields go into the vendor's request as they are. The payload is kept as written (canonical JSON); the vendor's
/// module maps it into its request. What the vendor would refuse for every token is found here and dead-lettered
/// as `Malformed: ...` naming the problem.
extension MessageParser {
    /// `notification`'s fields and the JSON type each must have.
    static let vendorNotificationFields: Set<String> = ["title", "body", "image"]

    @inline(never)
    func parseVendor(_ fields: MessageFields, provider: PushProvider, rules: AndroidVendorRules, id: String, kind: MessageKind,
                     uuid: String?, topic: String, seq: UInt64, now: Int64, raw: [UInt8]) throws(Problem) -> ParsedElement {
        let name = provider.rawValue
        guard let payloadValue = fields.payload else { throw Problem("payload is missing") }
        guard payloadValue.objectMembers != nil else { throw Problem("payload is not a JSON object") }
        if fields.pushType != nil { throw Problem("push_type is for \(PushProvider.default.rawValue) messages only: not allowed with provider \"\(name)\"") }
        // `priority` is accepted and not mapped: a vendor's high priority is a right it grants (set it in the
        // vendor's object).
        var priority = 10
        if let value = fields.priority { priority = try Self.priority(value) }
        var expiration: Int64?
        if let value = fields.expiration { expiration = try Self.expiration(value, now: now) ?? 0 }
        let collapseID = try Self.collapseID(fields.collapseID)
        let enqueuedAt = try Self.enqueuedAt(fields.enqueuedAt)

        let members: [JSONMember]
        let body: [UInt8]
        if let kept = fields.keptPayload(raw: raw) {
            body = kept
            guard let read = fields.keptPayloadMembers(raw: raw, kept: kept, maxDepth: limits.maxDepth) else {
                throw Problem("payload is not a JSON object")
            }
            members = read
        } else {
            members = payloadValue.objectMembers ?? []
            body = JSONWriter.canonical(payloadValue)
        }
        try Self.checkVendorPayload(members, vendor: name, rules: rules)
        guard body.count <= rules.maxPayloadBytes else {
            throw Problem("payload is \(body.count) bytes, over the \(rules.maxPayloadBytes)-byte limit for \(name)")
        }

        let strings = try Self.tokenStrings(fields)
        let (tokens, rejected) = try Self.sortTokens(strings, notA: "a vendor push token") { VendorToken.isValid($0) ? $0 : nil }
        let headers = PushHeaders(topic: topic, appTopic: topic, pushType: "", priority: priority,
                                  expiration: expiration, collapseID: collapseID, provider: provider)
        if headers.isExpired(nowSeconds: now) { throw Problem(reason: "Expired") }
        let message = PushMessage(seq: seq, id: id, kind: kind, uuid: uuid, headers: headers,
                                  payload: body, tokens: tokens, enqueuedAtMillis: enqueuedAt)
        return .valid(message, rejectedTokens: rejected)
    }

    /// The common shape: only `notification`, `data` and the vendor's object; `notification` of strings within the
    /// vendor's lengths; `data` of strings; the vendor's object an object.
    static func checkVendorPayload(_ members: [JSONMember], vendor: String, rules: AndroidVendorRules) throws(Problem) {
        for member in members {
            switch member.key {
            case "notification":
                guard let inner = member.value.objectMembers else {
                    throw Problem("payload.notification is \(member.value.typeName), not an object")
                }
                for field in inner {
                    guard vendorNotificationFields.contains(field.key) else {
                        throw Problem("payload.notification.\(Printable.clipped(field.key, to: 64)) is not a field of the common "
                                      + "notification (title, body, image); put the vendor's own in payload.\(vendor)")
                    }
                    guard let text = field.value.stringValue else {
                        throw Problem("payload.notification.\(field.key) is \(field.value.typeName), not a string")
                    }
                    let limit = field.key == "title" ? rules.maxTitleCharacters : field.key == "body" ? rules.maxBodyCharacters : nil
                    if let limit, rules.length(of: text) > limit {
                        throw Problem("payload.notification.\(field.key) is \(rules.length(of: text)) characters"
                                      + (rules.countsUTF16 ? " as \(vendor) counts them (UTF-16 units)" : "") + ", over \(vendor)'s \(limit)")
                    }
                }
            case "data":
                guard let inner = member.value.objectMembers else {
                    throw Problem("payload.data is \(member.value.typeName), not an object")
                }
                for field in inner where field.value.stringValue == nil {
                    throw Problem("payload.data.\(Printable.clipped(field.key, to: 64)) is \(field.value.typeName), not a string")
                }
            case vendor:
                guard member.value.objectMembers != nil else {
                    throw Problem("payload.\(vendor) is \(member.value.typeName), not an object")
                }
            default:
                throw Problem("payload.\(Printable.clipped(member.key, to: 64)) is not a field of a \(vendor) message "
                              + "(allowed: data, notification, \(vendor))")
            }
        }
    }
}
