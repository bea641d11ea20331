import PushCore
import RedisClient

/// Pushes many elements onto a list in chunks so that a run cut off part-way (Redis unreachable, the tool
/// killed) can be run again without pushing anything twice: each chunk is one script that LPUSHes it and
/// advances the run's progress key in the same step, and only if the progress is where the tool expects
/// it. A chunk whose reply was lost is then recognised on the retry (the progress is already past it), and a
/// run started again with the same run id continues where the progress says. The progress key
/// (`<prefix>:push-progress:<run id>`) shares the list's hash tag and expires after a day.
public struct ResumablePush: Sendable {
    public let connection: any RedisCommands
    private let scripts: ScriptRunner

    /// Elements per script call (one LPUSH).
    public static let chunk = 1000
    /// How long a run's progress is kept for a resume.
    public static let progressSeconds = 86_400

    public init(connection: any RedisCommands) {
        self.connection = connection
        scripts = ScriptRunner(connection: connection)
    }

    /// A run id for pushing these bytes (a file's content): the same file resumes the same run.
    public static func runID(forContent bytes: [UInt8]) -> String { SHA1.hex(bytes) }

    /// How many of the run's elements are already on the list (0 for a new run).
    public func progress(keys: RedisKeys, runID: String) async throws -> Int {
        Int(try await connection.execute(["GET", keys.pushProgress(runID: runID)]).string ?? "0") ?? 0
    }

    /// Pushes `elements[progress...]` and returns how many of the run's elements are on the list in all.
    /// Throws `Interrupted` (how far it got) when Redis fails part-way.
    public func push(_ elements: [[UInt8]], onto list: String, keys: RedisKeys, runID: String) async throws -> Int {
        var done = try await progress(keys: keys, runID: runID)
        while done < elements.count {
            let chunk = elements[done..<min(elements.count, done + Self.chunk)]
            do {
                let reply = try await scripts.run(Self.script, keys: [list, keys.pushProgress(runID: runID)],
                                                  arguments: [Array(String(done).utf8), Array(String(Self.progressSeconds).utf8)] + chunk)
                guard let now = reply.integer else { throw RedisError.unexpectedReply("push: \(reply.shape)") }
                done = Int(now)
            } catch {
                throw Interrupted(pushed: done, total: elements.count, runID: runID, cause: "\(error)")
            }
        }
        return done
    }

    /// A push cut off part-way: `pushed` of `total` are on the list; the same run id resumes it.
    public struct Interrupted: Error, CustomStringConvertible {
        public let pushed: Int
        public let total: Int
        public let runID: String
        public let cause: String
        public var description: String {
            "\(pushed) of \(total) pushed before: \(cause); run the same command again (run id \(runID)) to push the rest, nothing twice"
        }
    }

    /// KEYS: list, progress. ARGV: the progress this chunk starts at, progress TTL (s), the elements.
    /// Returns the progress after the call: unchanged (not pushed) when it was not where the caller expected.
    static let script = Script(name: "resumable-push", source: """
    local done = tonumber(redis.call('GET', KEYS[2]) or '0')
    if done ~= tonumber(ARGV[1]) then return done end
    local n = #ARGV - 2
    local a = 3
    while a <= #ARGV do
      local b = math.min(#ARGV, a + 511)
      redis.call('LPUSH', KEYS[1], unpack(ARGV, a, b))
      a = b + 1
    end
    redis.call('SET', KEYS[2], done + n, 'EX', tonumber(ARGV[2]))
    return done + n
    """)
}
