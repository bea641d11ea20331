import PushCore

/// The rules of docs/message-format.md for a message with `"provider": "fcm"` (Android devices through FCM HTTP v1):
/// registration tokens instead of hex, FCM's `message` object (without its target) as the payload, and the
/// message's `priority`, `expiration` and `collapse_id` mapped into the payload's `android` object. What FCM
/// would refuse for every token is found here and dead-lettered as `Malformed: ...` naming the problem.
/// FCM's rules as the parser calls them (`FCMModule.description.parse`).
struct FCMMessageRules: ProviderMessageRules {
    func parse(_ element: ProviderElement) throws(MessageParser.Problem) -> ParsedElement {
        try MessageParser.parseFCM(element)
    }
}

extension MessageParser {
    /// What FCM's `message` may hold besides its target.
    static let fcmPayloadFields: Set<String> = ["android", "apns", "data", "fcm_options", "notification", "webpush"]
    static let fcmMaxPayloadBytes = 4096

    /// FCM's rules (`FCMModule.description.parse`), after the fields every message has.
    static func parseFCM(_ element: ProviderElement) throws(Problem) -> ParsedElement {
        if element.payload == nil { throw Problem("payload is missing") }
        if element.payload?.objectMembers == nil { throw Problem("payload is not a JSON object") }
        if element.namesPushType { throw Problem("push_type is for \(PushProvider.default.rawValue) messages only: not allowed with provider \"fcm\"") }

        // Only what the producer wrote is mapped: without a field FCM's own default applies (high priority for
        // notification messages, 4 weeks of ttl) unless `payload.android` says otherwise.
        let priority = try element.priority()
        let expiration = try element.expiration()
        let collapseID = try element.collapseID()
        let enqueuedAt = try element.enqueuedAt()

        let canonicalBytes = element.keptPayload
        let mapsNothing = priority == nil && expiration == nil && collapseID == nil
        var members: [JSONMember] = []
        if let canonicalBytes, mapsNothing, Self.canonicalPayloadPasses(canonicalBytes) {
            // Read from its canonical bytes, the payload passes FCM's rules (most payloads: data and notification):
            // no tree to parse again, check and free.
        } else {
            // FCM's rules need the payload's tree, also when its canonical bytes were kept without one.
            members = try element.payloadMembers(kept: canonicalBytes)
            try Self.checkFCMPayload(members)
        }
        let body: [UInt8]
        if mapsNothing {
            // Nothing to map into `android` (mapIntoAndroid would change nothing): the canonical payload is the
            // body, written once and measured by its count, rather than measured by a pass of its own and written.
            body = canonicalBytes ?? JSONWriter.canonical(.object(members))
            guard body.count <= Self.fcmMaxPayloadBytes else {
                throw Problem("payload is \(body.count) bytes, over the \(Self.fcmMaxPayloadBytes)-byte limit for fcm")
            }
        } else {
            let size = canonicalBytes?.count ?? JSONWriter.length(of: .object(members))
            guard size <= Self.fcmMaxPayloadBytes else {
                throw Problem("payload is \(size) bytes, over the \(Self.fcmMaxPayloadBytes)-byte limit for fcm")
            }
            let mapped = try Self.mapIntoAndroid(members, priority: priority, expiration: expiration, collapseID: collapseID, now: element.now)
            body = mapped.map { JSONWriter.canonical(.object($0)) } ?? canonicalBytes ?? JSONWriter.canonical(.object(members))
        }

        let (tokens, rejected) = try element.tokens(notA: "an FCM registration token", isValid: FCMToken.isValid)
        let headers = PushHeaders(topic: element.topic, appTopic: element.topic, pushType: "", priority: priority ?? 10,
                                  expiration: expiration, collapseID: collapseID, provider: element.provider)
        if headers.isExpired(nowSeconds: element.now) { throw Problem(reason: "Expired") }
        return element.valid(headers: headers, payload: body, tokens: tokens, rejected: rejected, enqueuedAtMillis: enqueuedAt)
    }

    /// What FCM refuses whatever the token: a target or name, a field FCM's message does not have, a field that
    /// is not an object, a data value that is not a string (FCM: `Invalid value at 'message.data[0].value'`).
    static func checkFCMPayload(_ members: [JSONMember]) throws(Problem) {
        for member in members {
            let key = member.key
            // Compared, not hashed: a set's hashing of every key cost more than the rest of the check.
            if isFCMTargetField(key) {
                throw Problem("payload must not name \"\(key)\" (the worker adds each token as the target)")
            }
            guard isFCMPayloadField(key) else {
                throw Problem("payload.\(Printable.clipped(key, to: 64)) is not a field of an FCM message "
                              + "(allowed: \(fcmPayloadFields.sorted().joined(separator: ", ")))")
            }
            guard let inner = member.value.objectMembers else {
                throw Problem("payload.\(key) is \(member.value.typeName), not an object")
            }
            switch key {
            case "data":
                try checkDataMap(inner, path: "payload.data")
            case "notification":
                try checkTypes(inner, path: "payload.notification", FCMFieldTypes.notification)
            case "android":
                try checkAndroid(inner)
            default:
                break
            }
        }
    }

    /// Whether a canonical payload passes `checkFCMPayload`, read from its bytes: true only for members whose
    /// rules are simple to read there (`data` of strings without reserved keys, `notification` with string
    /// title, body and image, `apns`, `webpush` and `fcm_options` objects); false for anything else (`android`,
    /// a target, an unknown field, a value of another type), which the tree's checks then pass or refuse.
    static func canonicalPayloadPasses(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 2 else { return false }
        let isString = { (value: Range<Int>) in bytes[value.lowerBound] == UInt8(ascii: "\"") }
        return CanonicalJSON.allMembers(of: bytes, object: 0..<bytes.count) { key, value in
            guard bytes[value.lowerBound] == UInt8(ascii: "{") else { return false }
            if key.elementsEqual(dataKey) {
                return CanonicalJSON.allMembers(of: bytes, object: value) { key, value in
                    isString(value) && !isReservedDataKey(ascii: key)
                }
            }
            if key.elementsEqual(notificationKey) {
                return CanonicalJSON.allMembers(of: bytes, object: value) { key, value in
                    guard key.elementsEqual(titleKey) || key.elementsEqual(bodyKey) || key.elementsEqual(imageKey) else { return true }
                    return isString(value)
                }
            }
            return key.elementsEqual(apnsKey) || key.elementsEqual(webpushKey) || key.elementsEqual(fcmOptionsKey)
        }
    }

    private static let dataKey = Array("data".utf8), notificationKey = Array("notification".utf8)
    private static let titleKey = Array("title".utf8), bodyKey = Array("body".utf8), imageKey = Array("image".utf8)
    private static let apnsKey = Array("apns".utf8), webpushKey = Array("webpush".utf8), fcmOptionsKey = Array("fcm_options".utf8)

    /// `android`: the types FCM's AndroidConfig has, `priority` one of its two names, `ttl` a duration of at
    /// most four weeks, `data` a map of strings without reserved keys, `notification` with its fields' types.
    private static func checkAndroid(_ members: [JSONMember]) throws(Problem) {
        try checkTypes(members, path: "payload.android", FCMFieldTypes.android)
        for field in members {
            switch field.key {
            case "data":
                if let object = field.value.objectMembers { try checkDataMap(object, path: "payload.android.data") }
            case "notification":
                if let object = field.value.objectMembers {
                    try checkTypes(object, path: "payload.android.notification", FCMFieldTypes.androidNotification)
                }
            case "priority":
                // FCM reads the enum's name in either case.
                guard let text = field.value.stringValue, ["normal", "high"].contains(text.lowercased()) else {
                    throw Problem("payload.android.priority must be \"normal\" or \"high\"")
                }
            case "ttl":
                guard let text = field.value.stringValue, let seconds = wholeSecondsOrFraction(ofDuration: text) else {
                    throw Problem("payload.android.ttl must be a duration in seconds such as \"3600s\"")
                }
                guard seconds <= FCMRequestBody.maxTTLSeconds else {
                    throw Problem("payload.android.ttl is over FCM's 28 days (\(FCMRequestBody.maxTTLSeconds)s)")
                }
            default:
                break
            }
        }
    }

    /// Each field of `members` that `types` names has that JSON type; fields it does not name are left to FCM.
    private static func checkTypes(_ members: [JSONMember], path: String, _ types: [String: FCMFieldTypes.Kind]) throws(Problem) {
        for member in members {
            guard let kind = types[member.key] else { continue }
            guard kind.accepts(member.value) else {
                throw Problem("\(path).\(member.key) is \(member.value.typeName), not \(kind.description)")
            }
        }
    }

    /// A target (the worker adds `token`, one request per token) or the name FCM assigns to a sent message.
    static func isFCMTargetField(_ key: String) -> Bool {
        switch key {
        case "condition", "name", "token", "topic": return true
        default: return false
        }
    }

    /// `fcmPayloadFields.contains(key)`, without hashing.
    static func isFCMPayloadField(_ key: String) -> Bool {
        switch key {
        case "android", "apns", "data", "fcm_options", "notification", "webpush": return true
        default: return false
        }
    }

    /// `from`, `gcm` or a key starting with `google`, in any case, for an ASCII key's bytes (a canonical payload's
    /// keys are ASCII): folded byte by byte, with no lower-cased copy made.
    static func isReservedDataKey<Key: Collection<UInt8>>(ascii key: Key) -> Bool {
        func equalsFolded(_ word: StaticString, prefixOnly: Bool) -> Bool {
            let count = word.utf8CodeUnitCount
            guard prefixOnly ? key.count >= count : key.count == count else { return false }
            return zip(key.prefix(count), UnsafeBufferPointer(start: word.utf8Start, count: count)).allSatisfy { byte, letter in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == letter
            }
        }
        return equalsFolded("from", prefixOnly: false) || equalsFolded("gcm", prefixOnly: false) || equalsFolded("google", prefixOnly: true)
    }

    /// The same for any key: an ASCII one (nearly all) by its bytes, any other lower-cased.
    static func isReservedDataKey(_ key: String) -> Bool {
        let ascii: Bool?? = key.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.allSatisfy { $0 < 0x80 } ? isReservedDataKey(ascii: bytes) : nil
        }
        if let ascii, let verdict = ascii { return verdict }
        let lower = key.lowercased()
        return lower == "from" || lower == "gcm" || lower.hasPrefix("google")
    }

    /// A data map: string values, and none of FCM's reserved keys (`from`, `gcm`, any starting with `google`).
    private static func checkDataMap(_ members: [JSONMember], path: String) throws(Problem) {
        try checkStringMap(members, path: path)
        for member in members {
            if isReservedDataKey(member.key) {
                throw Problem("\(path).\(Printable.clipped(member.key, to: 64)) is a key FCM reserves (from, gcm, google...)")
            }
        }
    }

    /// The whole seconds of a duration as FCM reads `ttl` (`"3.5s"` counts as 3); nil for any other text.
    static func wholeSecondsOrFraction(ofDuration text: String) -> Int64? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8.count <= 32, utf8.last == UInt8(ascii: "s") else { return nil }
        let parts = utf8.dropLast().split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 18, whole.allSatisfy(isDigit) else { return nil }
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 9, parts[1].allSatisfy(isDigit) else { return nil }
        }
        return Int64(String(decoding: whole, as: UTF8.self))
    }

    private static func checkStringMap(_ members: [JSONMember], path: String) throws(Problem) {
        for member in members where member.value.stringValue == nil {
            throw Problem("\(path).\(Printable.clipped(member.key, to: 64)) is \(member.value.typeName), not a string "
                          + "(FCM data values are strings)")
        }
    }

    /// The payload's members with `priority`, `expiration` and `collapse_id` set in `android` where it leaves
    /// them unset, or nil when nothing changes. A field given both ways with different values is a conflict.
    /// A nonzero expiration is checked here but left out of the payload: `FCMRequestBody` writes the seconds
    /// left when it makes the body. An expiration of 0 is `"0s"` (deliver now or drop, as Apple's service does).
    static func mapIntoAndroid(_ members: [JSONMember], priority: Int?, expiration: Int64?, collapseID: String?,
                               now: Int64) throws(Problem) -> [JSONMember]? {
        let androidIndex = members.firstIndex { $0.key == "android" }
        var android = androidIndex.flatMap { members[$0].value.objectMembers } ?? []
        var changed = false
        func given(_ key: String) -> JSONValue? { android.first { $0.key == key }?.value }

        if let priority {
            let wanted = priority == 10 ? "high" : "normal"
            if let value = given("priority") {
                // FCM reads the enum's name in either case.
                guard value.stringValue?.lowercased() == wanted else {
                    throw Problem("priority conflicts with payload.android.priority")
                }
            } else {
                android.append(JSONMember(key: "priority", value: .string(wanted)))
                changed = true
            }
        }
        if let collapseID {
            if let value = given("collapse_key") {
                guard value.stringValue == collapseID else { throw Problem("collapse_id conflicts with payload.android.collapse_key") }
            } else {
                android.append(JSONMember(key: "collapse_key", value: .string(collapseID)))
                changed = true
            }
        }
        if let expiration {
            let wanted = FCMRequestBody.ttlSeconds(expiration: expiration, nowSeconds: now)
            if let value = given("ttl") {
                guard let text = value.stringValue, wholeSeconds(ofDuration: text) == wanted else {
                    throw Problem("expiration conflicts with payload.android.ttl")
                }
                if expiration != 0 {
                    // The same now; the body gets the seconds left when it is made.
                    android.removeAll { $0.key == "ttl" }
                    changed = true
                }
            } else if expiration == 0 {
                android.append(JSONMember(key: "ttl", value: .string("0s")))
                changed = true
            }
        }
        guard changed else { return nil }
        var result = members
        if let androidIndex {
            result[androidIndex].value = .object(android)
        } else {
            result.append(JSONMember(key: "android", value: .object(android)))
        }
        return result
    }

    /// The whole seconds of a protobuf duration as FCM reads `ttl` (`"3600s"`, `"3600.000s"`); nil for any
    /// other text or a fraction of a second (which equals no whole number of seconds).
    static func wholeSeconds(ofDuration text: String) -> Int64? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8.count <= 32, utf8.last == UInt8(ascii: "s") else { return nil }
        let number = utf8.dropLast()
        let parts = number.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(isDigit) else { return nil }
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= 9, fraction.allSatisfy({ $0 == UInt8(ascii: "0") }) else { return nil }
        }
        return Int64(String(decoding: whole, as: UTF8.self))
    }
}
