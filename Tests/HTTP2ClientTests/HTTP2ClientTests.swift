import Foundation
import HTTP2Client
import XCTest

/// Everything the client said, per request id and per connection.
struct Outcome {
    var responses: [UInt64: [(status: Int, body: [UInt8])]] = [:]
    var refused: [UInt64: [String]] = [:]
    var lost: [UInt64: [String]] = [:]
    var opened: [Int] = []
    /// When each connection's opening was seen (the poll that reported it).
    var openedAt: [Date] = []
    var closed: [(connection: Int, reason: String)] = []
    var goaways: [(connection: Int, lastStreamID: Int32)] = []
    var events = 0
}

final class HTTP2ClientTests: XCTestCase {
    // Static: XCTest on Linux keeps every test-case instance until exit, which LeakSanitizer reports as leaks.
    static let sharedHeaders = HTTP2HeaderBlock([
        (name: "apns-topic", value: "com.example.app", neverIndex: false),
        (name: "apns-push-type", value: "alert", neverIndex: false),
        (name: "authorization", value: "bearer eyJhbGciOiJFUzI1NiJ9.test.sig", neverIndex: true),
    ])
    static let sharedBody = HTTP2Body(Array(#"{"aps":{"alert":"hello"}}"#.utf8))
    var headers: HTTP2HeaderBlock { Self.sharedHeaders }
    var body: HTTP2Body { Self.sharedBody }

    func endpoint(_ certificates: TestCertificates, port: Int, connections: Int = 1) -> HTTP2Endpoint {
        var endpoint = HTTP2Endpoint(host: "localhost", port: port)
        endpoint.caFile = certificates.cert
        endpoint.initialConnections = connections
        endpoint.maxConnections = connections
        return endpoint
    }

    func request(_ id: UInt64) -> HTTP2Request {
        HTTP2Request(id: id, path: "/3/device/\(String(id, radix: 16))", headers: headers, body: body)
    }

    /// Runs the client until every id has a response (re-starting refused ones when `resend`) or the deadline.
    @discardableResult
    func drive(_ client: HTTP2Client, ids: [UInt64], resend: Bool = true, seconds: Double = 40,
               until: ((Outcome) -> Bool)? = nil, make: ((UInt64) -> HTTP2Request)? = nil) -> Outcome {
        var outcome = Outcome()
        var queue = ids[...]
        var retries: [UInt64] = []
        var events: [HTTP2Event] = []
        let deadline = Date().addingTimeInterval(seconds)
        let done: (Outcome) -> Bool = until ?? { $0.responses.count + $0.lost.count == ids.count }
        while Date() < deadline && !done(outcome) {
            while client.availableStreams > 0 {
                let id: UInt64
                if let retry = retries.popLast() { id = retry } else if let next = queue.popFirst() { id = next } else { break }
                XCTAssertTrue(client.start(make?(id) ?? request(id)))
            }
            client.waitingWork = !queue.isEmpty || !retries.isEmpty
            events.removeAll(keepingCapacity: true)
            client.poll(timeoutMillis: 100, into: &events)
            for event in events {
                outcome.events += 1
                switch event {
                case .response(let id, let status, let body, let sentAt, _):
                    XCTAssertGreaterThan(sentAt, 0, "HEADERS send time stamped")
                    outcome.responses[id, default: []].append((status, body))
                case .refused(let id, let reason):
                    outcome.refused[id, default: []].append(reason)
                    if resend { retries.append(id) }
                case .lost(let id, let reason):
                    outcome.lost[id, default: []].append(reason)
                case .connectionOpened(let connection):
                    outcome.opened.append(connection)
                    outcome.openedAt.append(Date())
                case .connectionClosed(let connection, let reason):
                    outcome.closed.append((connection, reason))
                case .goaway(let connection, let lastStreamID, _, _):
                    outcome.goaways.append((connection, lastStreamID))
                }
            }
        }
        return outcome
    }

    func assertEachAnsweredOnce(_ outcome: Outcome, ids: [UInt64], status: Int = 200, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(outcome.responses.count, ids.count, "every request answered", file: file, line: line)
        for id in ids {
            guard let answers = outcome.responses[id] else { continue }
            XCTAssertEqual(answers.count, 1, "request \(id) answered exactly once", file: file, line: line)
            XCTAssertEqual(answers.first?.status, status, file: file, line: line)
        }
        XCTAssertTrue(outcome.lost.isEmpty, "nothing lost: \(outcome.lost.prefix(3))", file: file, line: line)
    }

    func assertServerProcessedEachOnce(_ record: ServerRecord, ids: [UInt64], file: StaticString = #filePath, line: UInt = #line) {
        let paths = record.allPaths
        XCTAssertEqual(paths.count, ids.count, "server processed as many requests as sent", file: file, line: line)
        XCTAssertEqual(Set(paths), Set(ids.map { request($0).path }), "server saw each path", file: file, line: line)
        XCTAssertEqual(record.protocolErrors, 0, file: file, line: line)
    }

    // 1
    func testTwoThousandRequestsOverTwoConnections() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--max-streams", "100"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port, connections: 2))
        // Both connections up first (the client opens them one at a time, spaced): 2,000 requests can finish
        // on the first before the second is open, and this test is about spreading over two.
        let opened = drive(client, ids: [], until: { $0.opened.count == 2 })
        XCTAssertEqual(opened.opened.count, 2, "both connections opened")
        let ids = Array(UInt64(1)...2_000)
        let outcome = drive(client, ids: ids, resend: false)
        assertEachAnsweredOnce(outcome, ids: ids)
        XCTAssertTrue(outcome.refused.isEmpty)
        XCTAssertEqual(client.openConnections, 2)
        XCTAssertEqual(client.streamsLimit, 200)
        XCTAssertEqual(client.availableStreams, 200)
        XCTAssertEqual(client.close(), [])
        let record = try server.stop()
        assertServerProcessedEachOnce(record, ids: ids)
        XCTAssertEqual(record.connections.count, 2)
        for connection in record.connections {
            XCTAssertLessThanOrEqual(connection.maxConcurrent, 100, "never above the server's limit")
            XCTAssertLessThanOrEqual(connection.maxBeforeFirstResponse, 1, "one stream until the first answer")
            XCTAssertEqual(connection.violations, 0)
        }
        XCTAssertGreaterThan(record.connections.map(\.maxConcurrent).max() ?? 0, 10, "really multiplexed")
    }

    /// nghttp2 reads a header block's bytes in place when it packs the HEADERS frame, after `start` returned:
    /// the client must keep a block alive that nobody else holds (AddressSanitizer reports the use otherwise).
    func testAHeaderBlockDroppedByTheCallerIsStillSentWhole() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--max-streams", "50", "--record-header", "apns-collapse-id"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        let ids = Array(UInt64(1)...300)
        let outcome = drive(client, ids: ids, resend: false, make: { id in
            // A block of its own per request, referenced only by the request value handed to `start`.
            let block = HTTP2HeaderBlock([(name: "apns-topic", value: "com.example.app", neverIndex: false),
                                          (name: "apns-collapse-id", value: "collapse-\(id)", neverIndex: false)])
            return HTTP2Request(id: id, path: "/3/device/\(String(id, radix: 16))", headers: block, body: self.body)
        })
        assertEachAnsweredOnce(outcome, ids: ids)
        XCTAssertEqual(client.close(), [])
        let record = try server.stop()
        XCTAssertEqual(Set(record.allPaths), Set(ids.map { "/3/device/\(String($0, radix: 16))#collapse-\($0)" }))
    }

    // 2
    func testLoweredStreamLimitMidFlight() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates,
                                    ["--max-streams", "100", "--lower-streams-after", "150", "--to", "5", "--latency-ms", "5"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        let ids = Array(UInt64(1)...600)
        let outcome = drive(client, ids: ids, resend: false)
        assertEachAnsweredOnce(outcome, ids: ids)
        XCTAssertEqual(client.streamsLimit, 5, "the client follows the lowered SETTINGS")
        _ = client.close()
        let record = try server.stop()
        assertServerProcessedEachOnce(record, ids: ids)
        XCTAssertEqual(record.connections.count, 1)
        XCTAssertEqual(record.connections[0].violations, 0, "no stream opened above the limit in force")
        XCTAssertGreaterThan(record.connections[0].maxConcurrent, 5, "the limit was lowered while more were open")
    }

    // 3
    func testRefusedStreamsComeBackAsRefused() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--max-streams", "50", "--refuse-every", "7"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        let ids = Array(UInt64(1)...700)
        let outcome = drive(client, ids: ids)
        assertEachAnsweredOnce(outcome, ids: ids)
        _ = client.close()
        let record = try server.stop()
        let refusedEvents = outcome.refused.values.reduce(0) { $0 + $1.count }
        XCTAssertGreaterThanOrEqual(refusedEvents, 100)
        XCTAssertEqual(refusedEvents, record.refusedTotal, "each server refusal came back as .refused")
        XCTAssertTrue(outcome.refused.values.joined().allSatisfy { $0.contains("REFUSED_STREAM") })
        assertServerProcessedEachOnce(record, ids: ids)
    }

    // 4
    func testGoawayRefusesStreamsAboveLastStreamID() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--max-streams", "100", "--goaway-after", "50", "--latency-ms", "2"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        let ids = Array(UInt64(1)...200)
        let outcome = drive(client, ids: ids)
        assertEachAnsweredOnce(outcome, ids: ids)
        XCTAssertFalse(outcome.goaways.isEmpty, "GOAWAY reported")
        XCTAssertFalse(outcome.refused.isEmpty, "streams above last_stream_id refused")
        // A graceful GOAWAY (NO_ERROR): the reason names no error, and the scheduler takes it as no overload.
        XCTAssertTrue(outcome.refused.values.joined().allSatisfy { $0.hasPrefix("above GOAWAY last_stream_id") }, "\(outcome.refused)")
        XCTAssertTrue(outcome.lost.isEmpty, "none lost")
        XCTAssertGreaterThanOrEqual(outcome.opened.count, 2, "a replacement connection was opened")
        XCTAssertGreaterThanOrEqual(outcome.closed.count, 1)
        _ = client.close()
        let record = try server.stop()
        assertServerProcessedEachOnce(record, ids: ids)
        XCTAssertGreaterThanOrEqual(record.connections.count, 2)
    }

    /// A GOAWAY naming an error (ENHANCE_YOUR_CALM, 11): the streams above it are refused with a reason that
    /// names the error, which the scheduler takes as a sign of overload (a graceful GOAWAY is a rotation).
    func testAGoawayNamingAnErrorSaysSoInTheRefusalReason() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--max-streams", "100", "--goaway-after", "50", "--latency-ms", "2",
                                                                 "--goaway-error", "11"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        let ids = Array(UInt64(1)...200)
        let outcome = drive(client, ids: ids)
        assertEachAnsweredOnce(outcome, ids: ids)
        let reasons = outcome.refused.values.joined()
        XCTAssertFalse(reasons.isEmpty, "streams above last_stream_id refused")
        XCTAssertTrue(reasons.allSatisfy { $0.hasPrefix("above GOAWAY(ENHANCE_YOUR_CALM) last_stream_id") }, "\(outcome.refused)")
        _ = client.close()
        _ = try server.stop()
    }

    /// A server that accepts connections and goes away before processing anything, on every connection: only
    /// an answer proves that a connection works, so each of these is a failed attempt and the next waits longer
    /// (100 ms doubling to 5 s) instead of every 250 ms forever. Its GOAWAY and close lines at info and above
    /// are rate-limited (every one still at debug).
    func testAServerThatGoesAwayBeforeProcessingAnythingIsReconnectedEverMoreSlowly() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--goaway-unprocessed"])
        let logs = CapturedLogs()
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port), logger: logs.logger())
        let started = Date()
        let outcome = drive(client, ids: [1], seconds: 60) { $0.openedAt.count >= 7 }
        let elapsed = Date().timeIntervalSince(started)
        _ = client.close()
        XCTAssertGreaterThanOrEqual(outcome.openedAt.count, 7, "connections opened: \(outcome.opened)")
        XCTAssertTrue(outcome.responses.isEmpty)
        XCTAssertGreaterThanOrEqual(outcome.refused[1]?.count ?? 0, 6, "refused on each connection: \(outcome.refused)")
        let gaps = zip(outcome.openedAt.dropFirst(), outcome.openedAt).map { $0.timeIntervalSince($1) }
        // The 7th connection follows six failed ones: it waits 100 ms x 2^5 = 3.2 s. Spaced alone, 250 ms.
        XCTAssertGreaterThanOrEqual(gaps.last ?? 0, 1.5, "gaps between connections: \(gaps)")
        let loud = logs.lines.filter { $0.level >= .info }
        let budget = Int(elapsed / 5) + 1
        XCTAssertLessThanOrEqual(loud.filter { $0.message.contains("last_stream_id") }.count, budget,
                                 "GOAWAY lines at info and above in \(elapsed) s: \(loud.map(\.message))")
        XCTAssertLessThanOrEqual(loud.filter { $0.message.contains(" closed") || $0.message.contains(" failed") }.count, budget,
                                 "close and failure lines at info and above in \(elapsed) s: \(loud.map(\.message))")
        XCTAssertGreaterThanOrEqual(logs.lines.filter { $0.message.contains("last_stream_id") }.count, 6, "every GOAWAY logged, at debug")
        let record = try server.stop()
        XCTAssertEqual(record.allPaths, [], "nothing was processed")
    }

    /// Name resolution runs on a thread of its own: a lookup that blocks (a slow DNS server) must not freeze the
    /// client's other connections. Here every lookup after the first blocks until released; the first connection
    /// goes on answering while the second one's lookup hangs.
    func testASlowNameLookupFreezesNoOpenConnection() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--max-streams", "5", "--latency-ms", "20"])
        let gate = LookupGate()
        var settings = endpoint(certificates, port: server.port)
        settings.maxConnections = 2
        settings.connectTimeoutMillis = 60_000  // a lookup counts against it: not the point here
        settings.resolver = { host, port in
            gate.pass()
            return HTTP2Endpoint.systemResolver(host, port)
        }
        let client = try HTTP2Client(endpoint: settings)
        // Without the fix the blocked lookup holds the client's thread: released after a while so the test ends.
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { gate.release() }
        // Work waits with every stream taken: a second connection is opened, and its lookup blocks.
        let ids = Array(UInt64(1)...600)
        var answeredWhenTheLookupBlocked: Int?
        let outcome = drive(client, ids: ids, seconds: 40) { outcome in
            if answeredWhenTheLookupBlocked == nil && gate.blockedLookups > 0 {
                answeredWhenTheLookupBlocked = outcome.responses.count
            }
            return outcome.responses.count == ids.count
        }
        XCTAssertEqual(gate.blockedLookups, 1, "the second connection's lookup is under way")
        XCTAssertLessThan(answeredWhenTheLookupBlocked ?? ids.count, ids.count / 2, "most requests were still to go")
        XCTAssertEqual(outcome.responses.count, ids.count)
        XCTAssertFalse(gate.isReleased, "every request was answered while the lookup still blocked")
        XCTAssertEqual(outcome.opened.count, 1, "the second connection is still resolving")
        gate.release()
        let after = drive(client, ids: [], seconds: 20) { !$0.opened.isEmpty }
        XCTAssertEqual(after.opened.count, 1, "the second connection opens once its lookup returns")
        XCTAssertEqual(client.openConnections, 2)
        _ = client.close()
        _ = try server.stop()
    }

    // 5
    func testMissingPingAckReplacesConnection() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--no-ping-ack"])
        var settings = endpoint(certificates, port: server.port)
        settings.pingIntervalMillis = 200
        settings.pingTimeoutMillis = 300
        let client = try HTTP2Client(endpoint: settings)
        let outcome = drive(client, ids: [], seconds: 10) { o in
            o.closed.contains { $0.reason.contains("PING") } && o.opened.count >= 2
        }
        XCTAssertTrue(outcome.closed.contains { $0.connection == outcome.opened.first && $0.reason.contains("PING timeout") },
                      "closed: \(outcome.closed)")
        XCTAssertGreaterThanOrEqual(outcome.opened.count, 2, "replacement opened")
        _ = client.close()
        let record = try server.stop()
        XCTAssertGreaterThanOrEqual(record.connections.first?.pings ?? 0, 1, "the server got the PING")
    }

    // 6a
    func testWrongCAFailsVerification() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, [])
        var settings = endpoint(certificates, port: server.port)
        settings.caFile = certificates.otherCert
        let client = try HTTP2Client(endpoint: settings)
        let outcome = drive(client, ids: [], seconds: 10) { !$0.closed.isEmpty }
        XCTAssertTrue(outcome.opened.isEmpty)
        XCTAssertTrue(outcome.closed.first?.reason.contains("certificate verification failed") == true, "\(outcome.closed)")
        XCTAssertTrue(outcome.closed.first?.reason.hasPrefix("ConnectionError:") == true)
        _ = client.close()
    }

    // 6b
    func testServerWithoutALPNh2IsRefused() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--no-alpn"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        let outcome = drive(client, ids: [], seconds: 10) { !$0.closed.isEmpty }
        XCTAssertTrue(outcome.opened.isEmpty)
        XCTAssertTrue(outcome.closed.first?.reason.contains("ALPN") == true, "\(outcome.closed)")
        _ = client.close()
    }

    // 7
    func testWakeEndsABlockedPoll() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, [])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        let outcome = drive(client, ids: [], seconds: 10) { !$0.opened.isEmpty }
        XCTAssertEqual(outcome.opened.count, 1)
        var events: [HTTP2Event] = []
        // Settle until a poll really sits out its timeout (the server's SETTINGS ACK may still be on its way).
        for _ in 0..<20 {
            let quiet = Date()
            client.poll(timeoutMillis: 300, into: &events)
            if Date().timeIntervalSince(quiet) >= 0.25 { break }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { client.wake() }
        let started = Date()
        client.poll(timeoutMillis: 5_000, into: &events)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertLessThan(elapsed, 2.0, "wake() ended the poll early")
        XCTAssertGreaterThanOrEqual(elapsed, 0.1, "the poll really blocked until the wake")
        _ = client.close()
    }

    // Extra: an error answer keeps its body; a cancelled request produces no event and frees its stream.
    func testErrorBodyAndCancel() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--latency-ms", "300"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        _ = drive(client, ids: [], seconds: 10) { !$0.opened.isEmpty }
        XCTAssertTrue(client.start(HTTP2Request(id: 1, path: "/3/device/bad", headers: headers, body: body)))
        let first = drive(client, ids: [], seconds: 10) { !$0.responses.isEmpty }
        XCTAssertEqual(first.responses[1]?.first?.status, 400)
        XCTAssertEqual(first.responses[1].map { String(decoding: $0[0].body, as: UTF8.self) }, #"{"reason":"BadDeviceToken"}"#)
        // 400 is not a 2xx: still one stream until a success.
        XCTAssertEqual(client.availableStreams, 1)
        XCTAssertTrue(client.start(request(2)))
        var events: [HTTP2Event] = []
        client.poll(timeoutMillis: 0, into: &events)  // HEADERS leave
        client.cancel(id: 2)
        let after = drive(client, ids: [], seconds: 2) { _ in false }
        XCTAssertEqual(after.events + events.count, 0, "no event for a cancelled request")
        XCTAssertEqual(client.inFlight, 0, "its stream was closed")
        XCTAssertEqual(client.availableStreams, 1)
        _ = client.close()
    }

    /// Request ids are the caller's: the client keeps small ones in a table indexed by id and any other in a
    /// dictionary. Cancelling finds and resets the stream either way.
    func testCancelFindsRequestsWithSmallAndHugeIDs() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--latency-ms", "300"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        _ = drive(client, ids: [], seconds: 10) { !$0.opened.isEmpty }
        for id: UInt64 in [3, 1 << 40, UInt64.max] {
            XCTAssertTrue(client.start(request(id)), "request \(id) starts")
            var events: [HTTP2Event] = []
            client.poll(timeoutMillis: 0, into: &events)  // HEADERS leave
            client.cancel(id: id)
            let after = drive(client, ids: [], seconds: 1) { _ in false }
            XCTAssertEqual(after.events + events.count, 0, "no event for cancelled request \(id)")
            XCTAssertEqual(client.inFlight, 0, "request \(id)'s stream was reset and closed")
        }
        _ = client.close()
        XCTAssertEqual(try server.stop().connections.first?.clientResets, 3, "the server saw three cancels")
    }

    /// A server may answer before the request's body has all arrived; the stream then closes later. If the
    /// caller reuses the request id meanwhile (the transport reuses its slots), that late close must not
    /// forget the new request: cancelling it still resets its stream.
    func testALateCloseOfAnAnsweredStreamKeepsTheRequestThatReusedItsID() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--answer-before-body", "1", "--reset-answered-after-ms", "500"])
        let client = try HTTP2Client(endpoint: endpoint(certificates, port: server.port))
        _ = drive(client, ids: [], seconds: 10) { !$0.opened.isEmpty }
        XCTAssertTrue(client.start(request(1)))
        let answered = drive(client, ids: [], seconds: 10) { !$0.responses.isEmpty }
        XCTAssertEqual(answered.responses[1]?.first?.status, 200)
        XCTAssertEqual(client.inFlight, 1, "answered, its body still blocked: the stream is open")
        XCTAssertTrue(client.start(request(1)), "the id is free again for the caller")
        // The first stream's reset arrives while the second request (same id) waits for a body window.
        _ = drive(client, ids: [], seconds: 1.5) { _ in false }
        XCTAssertEqual(client.inFlight, 1, "the first stream closed; the second is open")
        client.cancel(id: 1)
        let after = drive(client, ids: [], seconds: 1.5) { _ in false }
        XCTAssertEqual(after.events, 0, "no event for the cancelled request")
        XCTAssertEqual(client.inFlight, 0, "the cancel reset the second stream")
        _ = client.close()
        XCTAssertEqual(try server.stop().connections.first?.clientResets, 1, "the server saw the cancel")
    }

    // Extra: a server that stops reading: PING times out, the sent requests come back .lost, a new connection opens.
    func testStalledServerLosesSentRequests() throws {
        let certificates = try TestCertificates()
        let server = try FakeServer(certificates: certificates, ["--stall-after", "20", "--latency-ms", "1000"])
        var settings = endpoint(certificates, port: server.port)
        settings.pingIntervalMillis = 200
        settings.pingTimeoutMillis = 300
        settings.firstStreamLimit = 100
        let client = try HTTP2Client(endpoint: settings)
        let ids = Array(UInt64(1)...30)
        let outcome = drive(client, ids: ids, resend: false, seconds: 10) { $0.lost.count + $0.refused.count == 30 && $0.opened.count >= 2 }
        XCTAssertEqual(outcome.lost.count, 30, "sent, never answered: ambiguous")
        XCTAssertTrue(outcome.closed.first?.reason.contains("PING timeout") == true, "\(outcome.closed)")
        XCTAssertGreaterThanOrEqual(outcome.opened.count, 2)
        _ = client.close()
    }

    /// The client certificate's password never shows when an endpoint is printed, interpolated, dumped or
    /// reflected (a log line or an error that includes the endpoint); the client itself still reads it.
    func testTheCertificatePasswordIsNeverPrinted() {
        var endpoint = HTTP2Endpoint(host: "api.push.apple.com", port: 443)
        endpoint.clientCertificateFile = "/etc/push/client.p12"
        endpoint.clientCertificatePassword = "hunter2-very-secret"
        var dumped = ""
        dump(endpoint, to: &dumped)
        let mirrored = Mirror(reflecting: endpoint).children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: ", ")
        for text in [String(describing: endpoint), "\(endpoint)", String(reflecting: endpoint), dumped, mirrored] {
            XCTAssertFalse(text.contains("hunter2"), text)
        }
        XCTAssertTrue("\(endpoint)".contains("/etc/push/client.p12"), "the rest still shows: \(endpoint)")
        XCTAssertEqual(endpoint.clientCertificatePassword, "hunter2-very-secret")
    }

    // Extra: credentials fail init clearly.
    func testBadCredentialsFailInit() throws {
        let certificates = try TestCertificates()
        var settings = HTTP2Endpoint(host: "localhost", port: 1)
        settings.caFile = "/nonexistent/ca.pem"
        XCTAssertThrowsError(try HTTP2Client(endpoint: settings)) { XCTAssertTrue("\($0)".contains("CA file")) }
        settings.caFile = certificates.cert
        settings.clientCertificateFile = "/nonexistent/client.pem"
        XCTAssertThrowsError(try HTTP2Client(endpoint: settings)) { XCTAssertTrue("\($0)".contains("client certificate")) }
        // PKCS#12 with a password: right password loads, wrong one fails.
        let p12 = certificates.directory.appendingPathComponent("client.p12").path
        try certificates.run("/usr/bin/openssl", ["pkcs12", "-export", "-in", certificates.cert, "-inkey", certificates.key,
                                                  "-out", p12, "-passout", "pass:secret"])
        settings.clientCertificateFile = p12
        settings.clientCertificatePassword = "secret"
        XCTAssertNoThrow(try HTTP2Client(endpoint: settings))
        settings.clientCertificatePassword = "wrong"
        XCTAssertThrowsError(try HTTP2Client(endpoint: settings)) { XCTAssertTrue("\($0)".contains("password")) }
        // PEM with certificate and key together.
        let pem = certificates.directory.appendingPathComponent("client.pem").path
        let combined = try String(contentsOfFile: certificates.cert, encoding: .utf8) + String(contentsOfFile: certificates.key, encoding: .utf8)
        try combined.write(toFile: pem, atomically: true, encoding: .utf8)
        settings.clientCertificateFile = pem
        settings.clientCertificatePassword = ""
        XCTAssertNoThrow(try HTTP2Client(endpoint: settings))
    }

    /// A PEM whose key is encrypted: loaded with its password, a clear error without one (OpenSSL's default
    /// callback would prompt on the terminal) or with a wrong one.
    func testAnEncryptedPEMKeyNeedsItsPasswordAndIsNeverPromptedFor() throws {
        let certificates = try TestCertificates()
        let encryptedKey = certificates.directory.appendingPathComponent("client-encrypted.key").path
        try certificates.run("/usr/bin/openssl", ["pkey", "-in", certificates.key, "-aes256", "-passout", "pass:secret", "-out", encryptedKey])
        let pem = certificates.directory.appendingPathComponent("client-encrypted.pem").path
        let combined = try String(contentsOfFile: certificates.cert, encoding: .utf8) + String(contentsOfFile: encryptedKey, encoding: .utf8)
        try combined.write(toFile: pem, atomically: true, encoding: .utf8)
        var settings = HTTP2Endpoint(host: "localhost", port: 1)
        settings.caFile = certificates.cert
        settings.clientCertificateFile = pem
        settings.clientCertificatePassword = "secret"
        XCTAssertNoThrow(try HTTP2Client(endpoint: settings))
        settings.clientCertificatePassword = ""
        XCTAssertThrowsError(try HTTP2Client(endpoint: settings)) {
            XCTAssertEqual("\($0)", "TLS: client certificate '\(pem)': encrypted key: no password configured")
        }
        settings.clientCertificatePassword = "wrong"
        XCTAssertThrowsError(try HTTP2Client(endpoint: settings)) {
            XCTAssertEqual("\($0)", "TLS: client certificate '\(pem)': encrypted key: the password does not open it")
        }
    }
}
