import APNsProvider
import FCMProvider
import PushCore

/// The properties every queue element must keep, whatever its bytes: checked by libFuzzer on millions of
/// generated inputs (scripts/fuzz.sh), and by this program on files given as arguments (a corpus or a
/// crash file to reproduce). A violated property stops the process, which is what both report as a failure.
enum MessageProperties {
    /// The providers' rules are their modules' (the default one's and FCM's): registered, as the worker registers
    /// them, before a parser is made.
    static let registered: Void = {
        _ = APNsModule.provider
        _ = PushProvider.fcm
    }()
    static let parser: MessageParser = {
        registered
        return MessageParser()
    }()
    static let lowercaseHex = Set("0123456789abcdef".utf8)

    static let treeParser: MessageParser = {
        registered
        return MessageParser(readsFieldsDirectly: false)
    }()
    static let fcmFields: Set<String> = ["android", "apns", "data", "fcm_options", "notification", "webpush"]

    static func check(_ bytes: [UInt8]) {
        let verdict = parser.parse(bytes, seq: 1, now: 1_800_000_000)
        // Reading the fields directly and parsing a tree agree on every element, valid or not.
        require(String(describing: verdict) == String(describing: treeParser.parse(bytes, seq: 1, now: 1_800_000_000)),
                "a verdict that differs between the direct reader and the tree")
        switch verdict {
        case .valid(let message, _) where message.headers.provider == .fcm:
            checkFCM(message, bytes)
        case .valid(let message, _):
            for value in [message.headers.topic, message.headers.collapseID ?? "-"] {
                require(value.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }, "a header value that is not visible ASCII")
            }
            require(message.payload.count <= 5120, "a payload over the limit")
            require((try? JSONParser.parse(message.payload)) != nil, "a payload that is not JSON")
            require(!message.tokens.isEmpty, "a message without tokens")
            require(message.tokens.allSatisfy { $0.utf8.allSatisfy(lowercaseHex.contains) }, "a token that is not lowercase hex")
            // The payload is the canonical form of what the producer sent, whether it was kept as the
            // producer's bytes (already canonical) or written from its tree.
            let root = try? JSONParser.parse(bytes)
            let tree = root?["payload"]
            require(tree.map(JSONWriter.canonical) == message.payload, "a payload that is not the canonical form of the element's")
            // Without a push_type, the one inferred from the kept bytes is the one the tree gives.
            if root?["push_type"] == nil {
                let aps = tree?["aps"]?.objectMembers
                let background = aps?.count == 1 && aps?.first?.key == "content-available"
                require(message.headers.pushType == (background ? "background" : "alert"), "a push type the payload does not imply")
            }
        case .invalid(let reason, _):
            require(reason == "Expired" || reason.hasPrefix("Malformed: "), "a reason that names no problem")
        }
        // The dead letter of any element is valid JSON and keeps the element whole.
        let record = OutcomeRecords.deadLetter(raw: bytes, failedTokens: nil, reason: "r", status: nil, attempts: 0,
                                               failedAtMillis: 0, worker: "w")
        require((try? JSONParser.parse(record, maxDepth: JSONParser.defaultMaxDepth + 1)) != nil, "a dead letter that is not JSON")
        // Canonical JSON is a fixed point: writing what was read and reading it again changes nothing.
        if let value = try? JSONParser.parse(bytes) {
            let once = JSONWriter.canonical(value)
            let again = (try? JSONParser.parse(once)).map(JSONWriter.canonical)
            require(again == once, "canonical JSON that does not read back the same")
            // And the scanner recognises it when it is an object of ASCII without escapes, not nested to the limit.
            if value.objectMembers != nil, once.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\\") }), !depthNear(once) {
                require(CanonicalJSON.objectEnd(in: once, from: 0, depth: 1, maxDepth: JSONParser.defaultMaxDepth) == once.count,
                        "an ASCII canonical object that the canonical scanner does not recognise")
            }
        }
        // What the canonical scanner recognises is JSON whose canonical form is itself.
        if let end = CanonicalJSON.objectEnd(in: bytes, from: 0, depth: 1, maxDepth: JSONParser.defaultMaxDepth) {
            let value = try? JSONParser.parse(Array(bytes[..<end]))
            require(value.map(JSONWriter.canonical) == Array(bytes[..<end]), "a recognised object that is not canonical JSON")
        }
    }

    /// A valid FCM message (docs/message-format.md): registration tokens as written, a payload of FCM's fields whose
    /// members other than `android` are the canonical form of the producer's, and a request body that is JSON
    /// holding exactly the payload and the token.
    static func checkFCM(_ message: PushMessage, _ bytes: [UInt8]) {
        require(message.headers.topic.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }, "an FCM app name that is not visible ASCII")
        require(message.headers.pushType.isEmpty, "an FCM message with a push type")
        require(!message.tokens.isEmpty, "an FCM message without tokens")
        require(message.tokens.allSatisfy(FCMToken.isValid), "an FCM token that is not a registration token")
        // The producer's payload is at most 4,096 bytes; the mapped android fields add a few dozen.
        require(message.payload.count <= 4096 + 160, "an FCM payload over the limit")
        guard let payload = try? JSONParser.parse(message.payload), let members = payload.objectMembers else {
            return require(false, "an FCM payload that is not a JSON object")
        }
        require(JSONWriter.canonical(payload) == message.payload, "an FCM payload that is not canonical")
        require(members.allSatisfy { fcmFields.contains($0.key) }, "an FCM payload with a field FCM's message lacks")
        let given = (try? JSONParser.parse(bytes))?["payload"]?.objectMembers ?? []
        let kept = members.filter { $0.key != "android" }
        require(JSONWriter.canonical(.object(kept)) == JSONWriter.canonical(.object(given.filter { $0.key != "android" })),
                "FCM payload fields other than android that are not the producer's")
        // The body for the first token: JSON, the payload's fields plus the token, a ttl where one is due.
        let body = FCMRequestBody(payload: message.payload, expiration: message.headers.expiration, nowSeconds: 1_800_000_000)
            .body(token: message.tokens[0])
        guard let sent = (try? JSONParser.parse(body))?["message"]?.objectMembers else {
            return require(false, "an FCM request body that is not JSON")
        }
        require(JSONWriter.canonical(.object(sent.filter { $0.key != "android" && $0.key != "token" })) == JSONWriter.canonical(.object(kept)),
                "an FCM body whose fields are not the payload's")
        require(sent.first { $0.key == "token" }?.value == .string(message.tokens[0]), "an FCM body without its token")
        let ttl = sent.first { $0.key == "android" }?.value["ttl"]
        // No expiration (nil) sets no ttl and 0 is already "0s" in the payload: only a time is counted down here.
        require(!message.headers.expiresAtATime || ttl != nil, "an FCM body without the ttl of its expiration")
    }

    /// Nested deep enough that the scanner leaves it to the parser (it keeps one level clear of the limit).
    static func depthNear(_ bytes: [UInt8]) -> Bool {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1; deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return deepest >= JSONParser.defaultMaxDepth
    }

    static func require(_ condition: Bool, _ what: String) {
        if !condition { fatalError("property violated: \(what)") }
    }
}

#if FUZZING
// libFuzzer's entry point; the fuzzer runtime supplies main(). The pointer stays at this boundary.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    MessageProperties.check(bytes)
    return 0
}
#else
import Foundation

/// Without the fuzzer: checks each file named on the command line (files of a folder too).
@main
struct MessageFuzzerReplay {
    static func main() throws {
        var files: [String] = []
        for path in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("no such file: \(path)\n".utf8))
                exit(2)
            }
            if isDirectory.boolValue {
                files += try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { "\(path)/\($0)" }
            } else {
                files.append(path)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            MessageProperties.check(Array(data))
        }
        print("checked \(files.count) inputs: every property held")
    }
}
#endif
