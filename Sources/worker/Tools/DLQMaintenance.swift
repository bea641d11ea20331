import ArgumentParser
import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// `worker dlq export [SELECTION] > FILE`: the selected dead letters as JSON lines, oldest first (read only).
struct DLQExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export",
                                                    abstract: "Print the selected dead letters as JSON lines, oldest first; changes nothing.")
    @OptionGroup var options: ToolOptions
    @OptionGroup var selection: DeadLetterSelection

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let startedAt = WallClock.nowMillis()
        var exported = 0
        for (keys, redis) in try options.shards(configuration) {
            try await ReplayPlan.walk(keys, redis, selection: selection.sharing((selection.max ?? 0) - exported),
                                      startedAt: startedAt) { letter, selected in
                if selected {
                    print(letter.text)
                    exported += 1
                }
                return false
            }
            await redis.close()
        }
        FileHandle.standardError.write(Data("exported \(exported) dead letter\(exported == 1 ? "" : "s")\n".utf8))
        if exported == 0 { throw ExitCode(1) }
    }
}

/// `worker dlq import FILE`: JSON lines (as `export` writes them) onto the dead-letter list, in file order.
/// Every line is checked first; a file with a bad line imports nothing and names the line.
struct DLQImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "import",
                                                    abstract: "Push dead letters from a JSON-lines file (as export writes them).")
    @OptionGroup var options: ToolOptions
    @Argument(help: "The JSON-lines file.") var file: String
    @Flag(help: "Import the file again even if a run of it completed within the last day.") var again = false

    func run() async throws {
        let configuration = try options.loadConfiguration()
        try options.checkOneShard(configuration, for: "dlq import")
        guard let data = FileManager.default.contents(atPath: file) else {
            FileHandle.standardError.write(Data("error: cannot read \(file)\n".utf8))
            throw ExitCode(2)
        }
        var entries: [[UInt8]] = []
        for (number, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let bytes = Array(line)
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            let problem: String?
            do {
                let record = try JSONParser.parse(bytes, maxDepth: JSONParser.defaultMaxDepth + 2)
                problem = record["reason"]?.stringValue == nil ? "no \"reason\": not a dead letter" : nil
            } catch {
                problem = "not JSON (\(error.description))"
            }
            if let problem {
                FileHandle.standardError.write(Data("error: \(file) line \(number + 1): \(problem); nothing imported\n".utf8))
                throw ExitCode(1)
            }
            entries.append(bytes)
        }
        let (keys, redis) = try options.oneShard(configuration, for: "dlq import")
        // The file's digest is the run's id: the same import cut off part-way resumes where it stopped when
        // run again (within a day); --again imports the file anew.
        let runID = "import-" + ResumablePush.runID(forContent: Array(data)) + (again ? "-\(WallClock.nowMillis())" : "")
        let pusher = ResumablePush(connection: redis)
        let already: Int
        let pushed: Int
        do {
            already = try await pusher.progress(keys: keys, runID: runID)
            pushed = try await pusher.push(entries, onto: keys.deadLetters, keys: keys, runID: runID)
        } catch let interrupted as ResumablePush.Interrupted {
            await redis.close()
            FileHandle.standardError.write(Data("error: \(interrupted.pushed) of \(interrupted.total) dead letters imported before: \(interrupted.cause); run the same command again to import the rest, none twice\n".utf8))
            throw ExitCode(1)
        }
        await redis.close()
        let fresh = pushed - already
        let resumed = already > 0 ? " (\(already) had been imported by an earlier run of this file; --again imports it anew)" : ""
        print("imported \(fresh) dead letter\(fresh == 1 ? "" : "s") into \(keys.deadLetters)\(resumed)")
    }
}

/// `worker dlq purge [SELECTION] [--yes]`: deletes the selected dead letters, a page of the oldest at a time in one
/// script each (`DeadLetterQueue.process(page:)`, linear however many are kept), after
/// a confirmation unless --yes. Leaves an audit line.
struct DLQPurge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "purge", abstract: "Delete the selected dead letters.")
    @OptionGroup var options: ToolOptions
    @OptionGroup var selection: DeadLetterSelection
    @Flag(name: .long, help: "Do not ask for confirmation.") var yes = false

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let startedAt = WallClock.nowMillis()
        let shards = try options.shards(configuration)
        var planned = 0
        // What each shard contributes, so that the deletion selects the entries counted (one `--max` for all).
        var perShard: [Int] = []
        for (keys, redis) in shards {
            var here = 0
            try await ReplayPlan.walk(keys, redis, selection: selection.sharing((selection.max ?? 0) - planned),
                                      startedAt: startedAt) { _, selected in
                if selected { here += 1 }
                return false
            }
            perShard.append(here)
            planned += here
        }
        guard planned > 0 else {
            print("nothing matched")
            throw ExitCode(1)
        }
        if !yes {
            guard isatty(STDIN_FILENO) == 1 else {
                FileHandle.standardError.write(Data("error: purging \(planned) dead letters needs --yes (no terminal to ask)\n".utf8))
                throw ExitCode(2)
            }
            print("delete \(planned) dead letter\(planned == 1 ? "" : "s")? [y/N] ", terminator: "")
            guard readLine()?.lowercased().hasPrefix("y") == true else { throw ExitCode(1) }
        }
        var deleted = 0
        for ((keys, redis), share) in zip(shards, perShard) {
            var progress = Progress(total: planned, quiet: true)
            let here = try await ReplayPlan.consume(keys, redis, selection: selection.sharing(share), startedAt: startedAt,
                                                    progress: &progress) { _, selected in
                selected ? .delete : .keep
            }
            deleted += here
            let record = ToolOutput.object([
                "started_at": ToolOutput.number(startedAt), "finished_at": ToolOutput.number(WallClock.nowMillis()),
                "user": .string(ProcessInfo.processInfo.environment["USER"] ?? "uid \(getuid())"),
                "host": .string(ProcessInfo.processInfo.hostName), "action": .string("purge"),
                "selection": .string(selection.summary), "purged": ToolOutput.number(here),
            ])
            try await redis.execute(bytes: [Array("LPUSH".utf8), Array(keys.auditLog.utf8), JSONWriter.canonical(record)])
            await redis.close()
        }
        print("deleted \(deleted) dead letter\(deleted == 1 ? "" : "s")")
    }
}
