import Foundation
import PushCore
import QueueProtocol
import RedisClient

/// Redis's own CPU per message for the queue protocol (claim + acknowledgement), read from Redis's CPU
/// counters (INFO cpu), with 1,000, 20,000 and 100,000 other messages held in flight: the protocol's cost
/// must not grow with what is in flight. Usage: queue-benchmark PORT [MEASURED]. Prints a table and JSON.
@main
struct QueueBenchmark {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let port = Int(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: queue-benchmark REDIS_PORT [MEASURED_MESSAGES]\n".utf8))
            exit(2)
        }
        let measured = arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000
        let url = RedisURL(host: "127.0.0.1", port: port)
        let admin = RedisConnection(url: url, name: "admin")
        let keys = RedisKeys()
        let queue = WorkQueue(connection: RedisConnection(url: url, name: "bench"), keys: keys, workerID: "bench")
        let token = String(repeating: "ab", count: 32)
        var rows: [[String: Double]] = []
        print("in_flight  messages  redis_us_per_message  messages_per_s_one_client")
        for inFlight in [1_000, 20_000, 100_000] {
            _ = try await admin.execute(["FLUSHALL"])
            let total = inFlight + measured
            var start = 0
            while start < total {
                let end = min(total, start + 1000)
                let batch = (start..<end).map { n in
                    #"{"id":"m\#(n)","topic":"com.example.chat","tokens":["\#(token)"],"payload":{"aps":{"alert":"hello \#(n)"}}}"#
                }
                _ = try await admin.execute(["LPUSH", keys.queue] + batch)
                start = end
            }
            var held: [UInt64] = []
            while held.count < inFlight {
                let claim = try await queue.claim(maxCount: min(1000, inFlight - held.count), maxBytes: 1 << 30, allowIsolated: true)
                held += claim.elements.map(\.seq)
            }
            let cpuBefore = try await cpuMicros(admin)
            let clock = ContinuousClock.now
            var done = 0
            var heldHead = 0
            while done < measured {
                let claim = try await queue.claim(maxCount: 500, maxBytes: 1 << 30, allowIsolated: true)
                held += claim.elements.map(\.seq)
                // Acknowledge as many of the oldest as were claimed: in flight stays constant.
                let finished = held[heldHead..<heldHead + claim.elements.count]
                heldHead += claim.elements.count
                try await queue.acknowledge(finished.map { CompletedMessage(seq: $0, records: [], notifications: 1) }, filteredCap: 100)
                done += claim.elements.count
            }
            let elapsed = ContinuousClock.now - clock
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let cpu = try await cpuMicros(admin) - cpuBefore
            let perMessage = cpu / Double(done)
            rows.append(["in_flight": Double(inFlight), "messages": Double(done), "redis_us_per_message": perMessage,
                         "messages_per_s": Double(done) / seconds])
            print(String(format: "%9d  %8d  %20.2f  %25.0f", inFlight, done, perMessage, Double(done) / seconds))
        }
        let json = rows.map { row in "{" + row.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \(String(format: "%.2f", $0.value))" }.joined(separator: ", ") + "}" }
        print("JSON: [" + json.joined(separator: ", ") + "]")
        await admin.close()
        await queue.connection.close()
    }

    static func cpuMicros(_ connection: RedisConnection) async throws -> Double {
        let info = try await connection.execute(["INFO", "cpu"]).string ?? ""
        var total = 0.0
        for line in info.split(whereSeparator: \.isNewline) {
            for field in ["used_cpu_sys:", "used_cpu_user:"] where line.hasPrefix(field) {
                total += Double(line.dropFirst(field.count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        return total * 1_000_000
    }
}
