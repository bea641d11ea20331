import ArgumentParser
import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// `worker parked ...`: the parked lists (isolation: an app's messages that wait in Redis for it), and what an operator
/// does with those no worker will send: an app removed from the configuration, messages nobody wants any more
/// (docs/tools.md). `worker status` shows why each waits and until when.
struct ParkedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parked",
        abstract: "The parked lists: list them, put one back on its input list, or drop one (kept a week as an audit copy).",
        subcommands: [ParkedList.self, ParkedRequeue.self, ParkedDrop.self]
    )
}

/// Which parked lists a command works on: one app's, in every class or one.
struct ParkedSelection: ParsableArguments {
    @Option(name: .long, help: "The provider, as messages name it in `provider`.") var provider: String
    @Option(name: .long, help: "The app (its topic).") var app: String
    @Option(name: .customLong("class"), help: "Only this class: chat, system or bulk (default: every class).") var messageClass: String?

    /// The selected lists of a shard, with their classes; a provider or class that does not exist is bad usage (exit 2).
    func lists(_ keys: RedisKeys) throws -> [(list: String, messageClass: MessageClass)] {
        guard let provider = PushProvider(rawValue: provider) else {
            FileHandle.standardError.write(Data("error: --provider \(provider) is not a provider of this worker (\(PushProvider.allCases.map(\.rawValue).joined(separator: ", ")))\n".utf8))
            throw ExitCode(2)
        }
        var classes = MessageClass.allCases
        if let messageClass {
            guard let chosen = MessageClass(rawValue: messageClass) else {
                FileHandle.standardError.write(Data("error: --class \(messageClass) is not one of chat, system, bulk\n".utf8))
                throw ExitCode(2)
            }
            classes = [chosen]
        }
        return classes.map { (keys.parked(provider: provider, topic: app, messageClass: $0), $0) }
    }
}

struct ParkedList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list",
                                                    abstract: "Every parked list: provider, app, class, messages, and whether the configuration still has the app.")
    @OptionGroup var options: ToolOptions

    func run() async throws {
        let configuration = try options.loadConfiguration()
        // A configuration whose apps cannot be loaded here (a secret file only the workers have) says nothing of them.
        let configured = (try? Providers.load(configuration)).map { providers in
            Set(providers.flatMap { apps in apps.topics.map { "\(type(of: apps).provider.rawValue):\($0)" } })
        }
        var rows: [JSONValue] = []
        var lines: [String] = []
        for (keys, redis) in try options.shards(configuration) {
            for parked in try await StatusCommand.parkedLists(keys, redis) {
                let (provider, app, messageClass) = StatusCommand.parse(parkedList: parked.list, keys)
                let known = configured.map { $0.contains("\(provider):\(app)") }
                var row: [String: JSONValue] = [
                    "list": .string(parked.list), "provider": .string(provider), "app": .string(app), "class": .string(messageClass),
                    "messages": ToolOutput.number(parked.messages),
                ]
                if let known { row["configured"] = .bool(known) }
                rows.append(ToolOutput.object(row))
                lines.append("\(Printable.escaped(parked.list))  \(parked.messages) messages (\(Printable.escaped(provider)) "
                             + "\(Printable.escaped(app)), \(messageClass))"
                             + (known == false ? "  not configured: no worker sends it; requeue once configured, or drop" : ""))
            }
        }
        if options.json {
            print(ToolOutput.json(.array(rows)))
        } else {
            print(lines.isEmpty ? "no parked messages" : lines.joined(separator: "\n"))
        }
    }
}

struct ParkedRequeue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "requeue",
        abstract: "Put an app's parked messages back on their input list, oldest first (or a dropped list's audit copy with --list).",
        discussion: "A worker that still cannot send for the app parks them again; once the app is configured (or its credential fixed) they are sent.")
    @OptionGroup var options: ToolOptions
    @Option(name: .long, help: "The provider, as messages name it in `provider`.") var provider: String?
    @Option(name: .long, help: "The app (its topic).") var app: String?
    @Option(name: .customLong("class"), help: "Only this class: chat, system or bulk (default: every class).") var messageClass: String?
    @Option(name: .long, help: "A list key instead: a dropped list's audit copy (worker parked drop printed it); its class is in its name.") var list: String?

    func run() async throws {
        let configuration = try options.loadConfiguration()
        var moved = 0
        for (keys, redis) in try options.shards(configuration) {
            let parked = ParkedLists(connection: redis, keys: keys)
            if let list {
                guard list.hasPrefix(keys.prefix + ":dropped:") || list.hasPrefix(keys.prefix + ":parked:") else { continue }
                let (_, _, name) = StatusCommand.parse(parkedList: keys.parkedName(ofDropped: list), keys)
                moved += try await parked.requeue(list: list, messageClass: MessageClass(rawValue: name) ?? .chat)
            } else {
                guard let provider, let app else {
                    FileHandle.standardError.write(Data("error: give --provider and --app, or --list\n".utf8))
                    throw ExitCode(2)
                }
                let selection = try ParkedSelection.parse(["--provider", provider, "--app", app] + (messageClass.map { ["--class", $0] } ?? []))
                for (key, messageClass) in try selection.lists(keys) {
                    moved += try await parked.requeue(list: key, messageClass: messageClass)
                }
            }
        }
        print(options.json ? ToolOutput.json(ToolOutput.object(["requeued": ToolOutput.number(moved)])) : "\(moved) messages back on their input lists")
    }
}

struct ParkedDrop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drop",
        abstract: "Drop an app's parked messages: each list becomes an audit copy (push:dropped:...), kept for --keep-days, that requeue --list brings back.")
    @OptionGroup var options: ToolOptions
    @OptionGroup var selection: ParkedSelection
    @Option(name: .customLong("keep-days"), help: "How long the audit copy is kept.") var keepDays = 7
    @Flag(name: .long, help: "Really drop them (without it, nothing changes).") var yes = false

    func run() async throws {
        let configuration = try options.loadConfiguration()
        guard yes else {
            FileHandle.standardError.write(Data("error: dropping parked messages needs --yes\n".utf8))
            throw ExitCode(2)
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let keep = Int64(max(1, min(keepDays, 3650))) * 24 * 3600 * 1000
        var copies: [JSONValue] = []
        var lines: [String] = []
        for (keys, redis) in try options.shards(configuration) {
            let parked = ParkedLists(connection: redis, keys: keys)
            for (list, _) in try selection.lists(keys) {
                let (copy, messages) = try await parked.drop(list: list, atMillis: now, keepMillis: keep)
                guard let copy else { continue }
                copies.append(ToolOutput.object(["list": .string(list), "copy": .string(copy), "messages": ToolOutput.number(messages)]))
                lines.append("\(messages) messages of \(Printable.escaped(list)) dropped; audit copy \(Printable.escaped(copy)) (kept \(keepDays) days)")
            }
        }
        if options.json {
            print(ToolOutput.json(.array(copies)))
        } else {
            print(lines.isEmpty ? "nothing parked for that app" : lines.joined(separator: "\n"))
        }
    }
}
