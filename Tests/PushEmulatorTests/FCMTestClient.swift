import Foundation
import HTTP2Client
import TestSupport

/// Sends FCM `messages:send` requests to the emulator over real HTTP/2 + TLS with the repo's own `HTTP2Client`,
/// on a thread of its own (the client blocks in epoll; never on Swift's cooperative pool).
struct FCMTestClient {
    struct Request {
        var path: String
        var headers: [(name: String, value: String)]
        var body: String
    }

    struct Outcome {
        /// Request index -> (status, JSON body).
        var answers: [Int: (status: Int, body: [String: Any])] = [:]
        var refused = 0
        var lost = 0
        var goaways = 0
        var connectionsOpened = 0
        /// The largest `streamsLimit` the client saw: the server's SETTINGS_MAX_CONCURRENT_STREAMS summed over
        /// open connections.
        var largestStreamsLimit = 0
        /// The client's `streamsLimit` when its first connection had opened, before any answer.
        var streamsLimitAtOpen: Int?
    }

    let port: Int
    let caFile: String
    var connections = 1
    /// The client's own cap on streams per connection (the server's SETTINGS decide when lower).
    var streamCap = 1_000

    static func send(path: String, bearer: String?, body: String) -> Request {
        var headers = [(name: "content-type", value: "application/json")]
        if let bearer { headers.append((name: "authorization", value: "Bearer \(bearer)")) }
        return Request(path: path, headers: headers, body: body)
    }

    static func message(token: String, extra: String = "") -> String {
        #"{"message":{"token":"\#(token)","notification":{"title":"hi","body":"there"}\#(extra.isEmpty ? "" : "," + extra)}}"#
    }

    /// Sends every request (again when refused, which is safe) until each has an answer or `seconds` pass.
    func run(_ requests: [Request], seconds: Double = 30) async -> Outcome {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: drive(requests, seconds: seconds)) }
            thread.start()
        }
    }

    private func drive(_ requests: [Request], seconds: Double) -> Outcome {
        var outcome = Outcome()
        var endpoint = HTTP2Endpoint(host: "127.0.0.1", port: port)
        endpoint.caFile = caFile
        endpoint.initialConnections = connections
        endpoint.maxConnections = connections
        endpoint.firstStreamLimit = streamCap  // the server's SETTINGS alone decide
        endpoint.maxStreamsPerConnection = streamCap
        guard let client = try? HTTP2Client(endpoint: endpoint) else { return outcome }
        defer { _ = client.close() }
        var waiting = Array(requests.indices.reversed())
        var events: [HTTP2Event] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && outcome.answers.count + outcome.lost < requests.count {
            while client.availableStreams > 0, let index = waiting.popLast() {
                let request = requests[index]
                let block = HTTP2HeaderBlock(request.headers.map { (name: $0.name, value: $0.value, neverIndex: $0.name == "authorization") })
                if !client.start(HTTP2Request(id: UInt64(index), path: request.path, headers: block, body: HTTP2Body(Array(request.body.utf8)))) {
                    waiting.append(index)
                    break
                }
            }
            client.waitingWork = !waiting.isEmpty
            events.removeAll(keepingCapacity: true)
            client.poll(timeoutMillis: 50, into: &events)
            outcome.largestStreamsLimit = max(outcome.largestStreamsLimit, client.streamsLimit)
            for event in events {
                switch event {
                case .response(let id, let status, let body, _, _):
                    outcome.answers[Int(id)] = (status, jsonObject(body))
                case .refused(let id, _):
                    outcome.refused += 1
                    waiting.append(Int(id))
                case .lost:
                    outcome.lost += 1
                case .connectionOpened:
                    outcome.connectionsOpened += 1
                    if outcome.streamsLimitAtOpen == nil { outcome.streamsLimitAtOpen = client.streamsLimit }
                case .goaway:
                    outcome.goaways += 1
                case .connectionClosed:
                    break
                }
            }
        }
        return outcome
    }
}

/// One request with curl (HTTP/2, the emulator's CA): status, response headers (lower-cased names) and body.
/// For what `HTTP2Client` does not report: response headers such as `retry-after`.
func curlFCM(url: String, caFile: String, bearer: String, body: String) throws -> (status: Int, headers: [String: String], body: [String: Any]) {
    let directory = makeTemporaryDirectory("curl-fcm")
    let headerFile = directory + "/headers", bodyFile = directory + "/body"
    let result = try runCommand(which("curl") ?? "/usr/bin/curl", [
        "--http2", "-sS", "--cacert", caFile, "-D", headerFile, "-o", bodyFile, "-w", "%{http_code}",
        "-H", "authorization: Bearer \(bearer)", "-H", "content-type: application/json", "--data-binary", body, url,
    ])
    var headers: [String: String] = [:]
    for line in ((try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "").split(whereSeparator: \.isNewline) {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
    }
    let answer = (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))).map { jsonObject(Array($0)) } ?? [:]
    return (Int(result.output.suffix(3)) ?? 0, headers, answer)
}

extension Dictionary where Key == String, Value == Any {
    /// `error` of an FCM error body.
    var fcmError: [String: Any] { self["error"] as? [String: Any] ?? [:] }
    /// The FcmError detail's `errorCode`, if any.
    var fcmErrorCode: String? {
        (fcmError["details"] as? [[String: Any]])?.first { ($0["@type"] as? String)?.hasSuffix("FcmError") == true }?["errorCode"] as? String
    }
}
