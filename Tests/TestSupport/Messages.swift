import Foundation

/// A 64-digit hex token that starts with `prefix` (the emulator stand-in answers by prefix) and ends with `n`.
public func token(_ prefix: String = "a1", _ n: Int) -> String {
    let tail = String(format: "%x", n)
    return prefix + String(repeating: "0", count: 64 - prefix.count - tail.count) + tail
}

/// A queue element as a producer would LPUSH it.
public func messageJSON(id: String, tokens: [String], kind: String? = nil, uuid: String? = nil,
                        topic: String = "com.example.chat", alert: String = "hello",
                        extra: [String: Any] = [:]) -> String {
    var object: [String: Any] = ["id": id, "topic": topic, "tokens": tokens, "payload": ["aps": ["alert": alert]]]
    if let kind { object["kind"] = kind }
    if let uuid { object["uuid"] = uuid }
    for (key, value) in extra { object[key] = value }
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self)
}

public func jsonObject(_ bytes: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
}

public func jsonObject(_ text: String) -> [String: Any] { jsonObject(Array(text.utf8)) }
