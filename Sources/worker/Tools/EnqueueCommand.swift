import ArgumentParser
import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// `worker enqueue`: builds a message of docs/message-format.md, validates it exactly as the worker will, and
/// LPUSHes it (`--count` times, for load tests).
struct EnqueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "LPUSH a message onto the queue, validated first the way the worker validates it."
    )

    @OptionGroup var options: ToolOptions
    @Option(name: .long, help: "The topic of an app of <provider>.apps (an iPhone app's bundle id for the default provider).") var topic: String
    @Option(name: .long, help: "A device token (hex or Base64; with another --provider, that service's token as it gave it); repeat for several.") var token: [String] = []
    @Option(name: .long, help: "Alert text (payload {\"aps\":{\"alert\":TEXT}}; with another --provider {\"notification\":{\"body\":TEXT}}).") var alert: String?
    @Option(name: .long, help: "With --alert and another --provider: the notification's title ({\"notification\":{\"title\":TITLE,\"body\":TEXT}}); some vendors refuse a notification without one.") var title: String?
    @Option(name: .long, help: "The message's provider (docs/message-format.md); default: the default provider (iPhones). Another: Android through Firebase or China's vendors.") var provider: String?
    @Option(name: .long, help: "A file holding the whole payload as JSON.") var payloadFile: String?
    @Option(name: .long, help: "private, group or system.") var kind: String?
    @Option(name: .long) var uuid: String?
    @Option(name: .long, help: "The default provider's push type (push_type of docs/message-format.md).") var pushType: String?
    @Option(name: .long, help: "10, 5 or 1.") var priority: Int?
    @Option(name: .long, help: "UNIX seconds, or +N seconds from now.") var expiration: String?
    @Option(name: .long) var collapseId: String?
    @Option(name: .long, help: "The message id (with --count, a suffix -N is added); default: enqueue-<time>.") var id: String?
    @Option(name: .long, help: "How many copies to push.") var count: Int = 1
    @Flag(name: .long, help: "Push onto push:queue:bulk (broadcasts, campaigns: work that never delays push:queue).") var bulk = false

    func run() async throws {
        let configuration = try options.loadConfiguration()
        guard (1...1_000_000).contains(count) else { throw ValidationError("--count must be 1..1000000") }
        guard !token.isEmpty else { throw ValidationError("give at least one --token") }
        if let provider, PushProvider(rawValue: provider) == nil {
            throw ValidationError("--provider must be \(PushProvider.namesForErrors.replacingOccurrences(of: "\"", with: ""))")
        }
        // Every provider module's message takes the common Android shape's `notification`.
        let android = provider.flatMap(PushProvider.init(rawValue:)).map { $0 != .default } ?? false
        let payload: JSONValue
        switch (alert, payloadFile) {
        case (let text?, nil):
            if android {
                var notification: [String: JSONValue] = ["body": .string(text)]
                if let title { notification["title"] = .string(title) }
                payload = ToolOutput.object(["notification": ToolOutput.object(notification)])
            } else {
                guard title == nil else { throw ValidationError("--title is for another --provider: an iPhone's alert is the --alert text") }
                payload = ToolOutput.object(["aps": ToolOutput.object(["alert": .string(text)])])
            }
        case (nil, let file?):
            guard let bytes = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            do { payload = try JSONParser.parse(Array(bytes)) } catch {
                throw ValidationError("\(file) is not JSON: \(error.description)")
            }
        default:
            throw ValidationError("give exactly one of --alert and --payload-file")
        }
        let base = id ?? "enqueue-\(WallClock.nowMillis())"
        let now = WallClock.nowMillis()
        let parser = MessageParser(limits: { var limits = MessageLimits(); limits.maxElementBytes = configuration.collector.maxElementBytes; return limits }())
        var elements: [[UInt8]] = []
        elements.reserveCapacity(count)
        for n in 0..<count {
            var fields: [String: JSONValue] = [
                "id": .string(count == 1 ? base : "\(base)-\(n + 1)"), "topic": .string(topic),
                "tokens": .array(token.map { .string($0) }), "payload": payload, "enqueued_at": ToolOutput.number(now),
            ]
            if let provider { fields["provider"] = .string(provider) }
            if let kind { fields["kind"] = .string(kind) }
            if let uuid { fields["uuid"] = .string(uuid) }
            if let pushType { fields["push_type"] = .string(pushType) }
            if let priority { fields["priority"] = ToolOutput.number(priority) }
            if let expiration {
                // "+N" is relative (a string, as producers send it); digits alone are UNIX seconds.
                fields["expiration"] = expiration.hasPrefix("+") ? .string(expiration) : Int64(expiration).map(ToolOutput.number) ?? .string(expiration)
            }
            if let collapseId { fields["collapse_id"] = .string(collapseId) }
            let element = JSONWriter.canonical(ToolOutput.object(fields))
            if n == 0, case .invalid(let reason, _) = parser.parse(element, seq: 0, now: WallClock.nowSeconds()) {
                // The worker would dead-letter it: say why now, and push nothing.
                FileHandle.standardError.write(Data("error: the worker would reject this message: \(reason)\n".utf8))
                throw ExitCode(2)
            }
            elements.append(element)
        }
        guard let (keys, redis) = try options.shards(configuration).first else { throw ExitCode(2) }
        // The messages' id is the run's id: a run cut off part-way is resumed by running it again with --id.
        let pusher = ResumablePush(connection: redis)
        let already: Int
        let pushed: Int
        do {
            already = try await pusher.progress(keys: keys, runID: "enqueue-\(base)")
            pushed = try await pusher.push(elements, onto: bulk ? keys.bulkQueue : keys.queue, keys: keys, runID: "enqueue-\(base)")
        } catch let interrupted as ResumablePush.Interrupted {
            await redis.close()
            FileHandle.standardError.write(Data("error: \(interrupted.pushed) of \(interrupted.total) messages enqueued before: \(interrupted.cause); run the same command again with --id \(base) to enqueue the rest, none twice\n".utf8))
            throw ExitCode(1)
        }
        await redis.close()
        let fresh = pushed - already
        if options.json {
            print(ToolOutput.json(ToolOutput.object(["queue": .string(bulk ? keys.bulkQueue : keys.queue), "enqueued": ToolOutput.number(fresh),
                                                     "already_enqueued": ToolOutput.number(already), "id": .string(base)])))
        } else {
            let resumed = already > 0 ? "; \(already) were already there from an earlier run with this id" : ""
            print("enqueued \(fresh) message\(fresh == 1 ? "" : "s") to \(bulk ? keys.bulkQueue : keys.queue) (id \(base)\(count > 1 ? "-1..\(count)" : "")\(resumed))")
        }
    }
}
