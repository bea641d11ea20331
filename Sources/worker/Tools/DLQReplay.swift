import ArgumentParser
import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// `worker dlq replay`: moves selected dead letters' messages back to the queue (docs/tools.md).
///
/// Each entry moves in one server-side script: it leaves `push:dlq` exactly when its message enters
/// `push:queue` (a page of the oldest entries at a time: `DeadLetterQueue.process(page:)`), so a replay
/// interrupted at any instant, or two replays at once, neither lose nor duplicate anything. The set is fixed at start: the entries present then, oldest
/// first, and none that failed after the run began. Entries are read a page at a time (bounded memory).
struct DLQReplay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Move selected dead letters' messages back to the queue, atomically per entry.",
        discussion: "Skips permanent failures unless --include-permanent, drops tokens push:feedback marks dead, skips expired messages. --dry-run prints the plan and changes nothing. Every run leaves an audit entry in <prefix>:dlq:audit."
    )

    @OptionGroup var options: ToolOptions
    @OptionGroup var selection: DeadLetterSelection
    @Flag(name: .long, help: "Print the plan (counts by reason and topic, what is skipped and why); change nothing.") var dryRun = false
    @Option(name: .long, help: "At most this many messages per second.") var rate: Double?
    @Flag(name: .long, help: "Replay permanent failures too (BadDeviceToken, PayloadTooLarge, Malformed..., PoisonMessage, ...).") var includePermanent = false
    @Flag(name: .long, help: "Do not ask for confirmation.") var yes = false
    @Option(name: .long, help: "The list replayed messages enter: queue (push:queue, the default) or bulk (push:queue:bulk: a large replay that must not delay chat pushes).")
    var to: String = "queue"

    /// The pipeline's own reasons no replay can fix: a message that crashed workers, or one past its expiration
    /// (with the prefixes below: one the parser refused, or whose app is not configured).
    static let permanentReasons: Set<String> = ["PoisonMessage", "Expired"]

    /// `provider`: the record's (none: the default provider's); its module's permanent codes
    /// (`ProviderDescription.permanentReasons`) count for its dead letters.
    static func isPermanent(_ reason: String, provider: String? = nil) -> Bool {
        if permanentReasons.contains(reason) || reason.hasPrefix("Malformed") || reason.hasPrefix("TopicNotConfigured") { return true }
        guard let module = (provider.map { PushProvider(rawValue: $0) } ?? PushProvider.default)?.module else { return false }
        return module.permanentReasons.contains(reason)
    }

    func validate() throws {
        if let rate, !(rate > 0 && rate <= 1_000_000) { throw ValidationError("--rate must be above 0 (messages per second)") }
        guard Lane(rawValue: to) != nil else { throw ValidationError("--to must be queue or bulk") }
    }

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let shards = try options.shards(configuration)
        let startedAt = WallClock.nowMillis()
        // Shards are planned one after another, sharing one `--max`; each runs with the selection it was planned with.
        var plans: [(keys: RedisKeys, redis: any RedisCommands, plan: ReplayPlan, selection: DeadLetterSelection)] = []
        var selected = 0
        for (keys, redis) in shards {
            let share = selection.sharing((selection.max ?? 0) - selected)
            let plan = try await ReplayPlan.make(keys: keys, redis: redis, selection: share, includePermanent: includePermanent,
                                                 startedAt: startedAt)
            selected += plan.selected
            plans.append((keys, redis, plan, share.sharing(plan.selected)))
        }
        let total = plans.reduce(0) { $0 + $1.plan.toReplay }
        for entry in plans { print(entry.plan.describe(prefix: entry.keys.prefix, json: options.json)) }
        if dryRun || total == 0 {
            for entry in plans { try await audit(entry.keys, entry.redis, startedAt: startedAt, counts: entry.plan, moved: 0, dryRun: dryRun) }
            for entry in plans { await entry.redis.close() }
            if total == 0 { throw ExitCode(1) }
            return
        }
        if !yes {
            guard isatty(STDIN_FILENO) == 1 else {
                FileHandle.standardError.write(Data("error: replaying \(total) messages needs --yes (no terminal to ask)\n".utf8))
                throw ExitCode(2)
            }
            print("replay \(total) message\(total == 1 ? "" : "s")? [y/N] ", terminator: "")
            guard readLine()?.lowercased().hasPrefix("y") == true else { throw ExitCode(1) }
        }
        var progress = Progress(total: total)
        var moved = 0
        for entry in plans {
            let result = try await ReplayPlan.execute(keys: entry.keys, redis: entry.redis, selection: entry.selection,
                                                      includePermanent: includePermanent, startedAt: startedAt,
                                                      rate: rate, to: Lane(rawValue: to) ?? .chat, progress: &progress)
            moved += result
            try await audit(entry.keys, entry.redis, startedAt: startedAt, counts: entry.plan, moved: result, dryRun: false)
            await entry.redis.close()
        }
        progress.finish()
        print(options.json ? ToolOutput.json(ToolOutput.object(["replayed": ToolOutput.number(moved)]))
                           : "replayed \(moved) message\(moved == 1 ? "" : "s") (others may have been taken by a concurrent replay)")
    }

    /// One audit line per run and shard: when, who, what was selected, what happened.
    private func audit(_ keys: RedisKeys, _ redis: any RedisCommands, startedAt: Int64, counts: ReplayPlan, moved: Int, dryRun: Bool) async throws {
        let record = ToolOutput.object([
            "started_at": ToolOutput.number(startedAt), "finished_at": ToolOutput.number(WallClock.nowMillis()),
            "user": .string(ProcessInfo.processInfo.environment["USER"] ?? "uid \(getuid())"),
            "host": .string(ProcessInfo.processInfo.hostName), "dry_run": .bool(dryRun),
            "selection": .string(selection.summary + (includePermanent ? " --include-permanent" : "")),
            "planned": ToolOutput.number(counts.toReplay), "replayed": ToolOutput.number(moved),
            "skipped": ToolOutput.object(counts.skipped.mapValues { ToolOutput.number($0) }),
        ])
        try await redis.execute(bytes: [Array("LPUSH".utf8), Array(keys.auditLog.utf8), JSONWriter.canonical(record)])
    }
}

extension RedisKeys {
    /// Audit of dead-letter replays: one JSON line per run and shard.
    var auditLog: String { "\(prefix):dlq:audit" }
}

/// A progress bar on a terminal, a plain line every two seconds otherwise.
struct Progress {
    let total: Int
    var done = 0
    private let terminal = isatty(STDOUT_FILENO) == 1
    private let quiet: Bool
    private var lastLine = ContinuousClock.now

    /// `quiet`: only counts (a purge prints its result, not its progress).
    init(total: Int, quiet: Bool = false) {
        self.total = total
        self.quiet = quiet
    }

    mutating func advance(_ count: Int) {
        done += count
        if quiet { return }
        if terminal {
            let width = 30
            let filled = total == 0 ? width : min(width, done * width / total)
            print("\r[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(done)/\(total)", terminator: "")
            fflush(nil)  // every output stream: the bar shows at once
        } else if ContinuousClock.now - lastLine > .seconds(2) {
            lastLine = ContinuousClock.now
            print("replayed \(done) of \(total)")
        }
    }

    func finish() { if terminal && !quiet { print("") } }
}
