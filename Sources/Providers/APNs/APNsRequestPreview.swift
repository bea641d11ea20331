import PushCore

/// What `worker explain` shows of the request an APNs message becomes (`ProviderDescription.requestPreview`): the
/// path, each `apns-*` header as sent (or that it is not), and the body.
enum APNsRequestPreview {
    static func fields(of message: PushMessage) -> [(field: String, value: String)] {
        let headers = message.headers
        return [
            ("request", "POST /3/device/<token>"),
            ("apns-topic", headers.topic),
            ("apns-push-type", headers.pushType),
            ("apns-priority", String(headers.priority)),
            ("apns-expiration", headers.expiration.map { $0 == 0 ? "0 (deliver now or never)" : String($0) }
                ?? "not sent (no expiration given: Apple stores the push for an offline device by its own policy)"),
            ("apns-collapse-id", headers.collapseID ?? "not sent"),
            ("body", String(decoding: message.payload, as: UTF8.self)),
        ]
    }
}
