import ArgumentParser
import Foundation
import PushCore

/// `worker explain`: reads one message as a producer would LPUSH it and says, field by field, what the worker
/// would do with it: a dead letter and why, or the requests it would send (headers and body), which tokens go to
/// feedback, and the members it ignores (a misspelled optional field does nothing). Touches no Redis.
struct ExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Say what the worker would do with one message (a file, or standard input), without sending it.",
        discussion: "Exit 0 when the worker would send it, 1 when it would be a dead letter, 2 on bad usage."
    )

    @OptionGroup var options: ToolOptions
    @Argument(help: "A file holding the message; none or - reads standard input.") var file: String?

    /// The message's members the worker reads (docs/message-format.md); any other is ignored.
    static let knownFields: Set<String> = [
        "id", "kind", "uuid", "topic", "tokens", "payload", "provider", "push_type", "priority", "expiration", "collapse_id",
        "enqueued_at",
    ]

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let bytes: [UInt8]
        if let file, file != "-" {
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            bytes = Array(data)
        } else {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        var element = bytes
        while let last = element.last, last == 0x0a || last == 0x0d { element.removeLast() }  // a file's final newline
        var limits = MessageLimits()
        limits.maxElementBytes = configuration.collector.maxElementBytes
        let now = WallClock.nowSeconds()
        let explanation = Self.explain(element, parser: MessageParser(limits: limits), configuration: configuration, now: now)
        if options.json {
            print(ToolOutput.json(ToolOutput.object(explanation.json)))
        } else {
            for (name, value) in explanation.lines { print("\(name): \(Printable.clipped(value, to: 4000))") }
        }
        if !explanation.sent { throw ExitCode(1) }
    }

    struct Explanation {
        var sent = false
        var lines: [(String, String)] = []
        var json: [String: JSONValue] = [:]

        mutating func say(_ name: String, _ value: String) {
            lines.append((name, value))
            json[name] = .string(value)
        }
    }

    static func explain(_ element: [UInt8], parser: MessageParser, configuration: WorkerConfiguration, now: Int64) -> Explanation {
        var out = Explanation()
        let ignored = ((try? JSONParser.parse(element))?.objectMembers ?? []).map(\.key).filter { !knownFields.contains($0) }
        switch parser.parse(element, seq: 1, now: now) {
        case .invalid(let reason, let id):
            out.say("outcome", "dead letter, never sent")
            out.say("reason", reason)
            if let id { out.say("id", id) }
        case .valid(let message, let rejected):
            let headers = message.headers
            out.sent = true
            out.say("id", message.id)
            out.say("provider", headers.provider.rawValue)
            let apps = configuration.appTopics(of: headers.provider)
            let list = "\(headers.provider.rawValue).apps"
            if apps.contains(headers.appTopic) {
                out.say("app", "\(headers.appTopic) (configured in \(list))")
            } else {
                out.sent = false
                out.say("app", "\(headers.appTopic): no app in \(list) has this topic here; the worker dead-letters it (TopicNotConfigured)")
            }
            out.say("kind", message.kind == .private ? "private (never merged)"
                : "\(message.kind.rawValue) (merged with identical \(message.kind.rawValue) messages of the same window\(message.uuid.map { " and uuid \($0)" } ?? ""))")
            if let rules = headers.provider.vendorRules {
                out.say("tokens", "\(message.tokens.count) sent, up to \(rules.tokensPerRequest) in one request")
            } else {
                out.say("tokens", "\(message.tokens.count) sent, one request each")
            }
            if !rejected.isEmpty { out.say("feedback", "\(rejected.count) malformed token(s) go to feedback as BadDeviceToken: \(rejected.prefix(5).joined(separator: ", "))") }
            if let preview = headers.provider.module?.requestPreview {
                for (field, value) in preview(message, now) { out.say(field, value) }
            } else {
                out.say("payload", String(decoding: message.payload, as: UTF8.self)
                        + " (mapped into \(headers.provider.rawValue)'s request when sent: docs/vendors.md)")
            }
            if let enqueued = message.enqueuedAtMillis { out.say("enqueued_at", "\(enqueued) (queue-to-provider latency is measured)") }
        }
        out.say("ignored", ignored.isEmpty ? "none" : ignored.joined(separator: ", ") + " (not fields of a message: a misspelled field does nothing)")
        return out
    }
}
