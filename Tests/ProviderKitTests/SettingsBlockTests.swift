import ProviderKit
import PushCore
import XCTest

/// A module declares its block once (`SettingsBlock`): the keys the configuration accepts, the secret files, the
/// reading with its checks and defaults, and `check-config`'s lines all come from that one declaration.
final class SettingsBlockTests: XCTestCase {
    struct Settings: Equatable {
        var endpoint = "https://push.example.com"
        var caFile = ""
        var connections = 2
        var maxConnections = 16
        var requestTimeoutMillis = 10_000
        var mode = Mode.fast
        var apps: [App] = []
    }

    enum Mode: String, CaseIterable { case fast, careful }

    struct App: Equatable {
        var topic = ""
        var keyFile = ""
        var channel = ""
        var region = ""
        var rate = 100
    }

    static let block = SettingsBlock<Settings, App>(
        name: "acme",
        keys: [.endpoint(\.endpoint), .caFile(\.caFile), .connections(\.connections),
               .maxConnections(\.maxConnections, connections: \.connections), .requestTimeout(\.requestTimeoutMillis),
               .choice("mode", \.mode)],
        appKeys: [.text("topic", \.topic), .secretFile("key_file", \.keyFile), .text("channel", \.channel),
                  .httpsURL("region", \.region, empty: .hidden), .number("rate", \.rate, min: 1)],
        settings: { Settings() }, app: { App() }, apps: \.apps, topic: \.topic,
        finishApp: { app, key in
            if app.keyFile.isEmpty { throw ConfigurationError.invalid(key: key, reason: "needs key_file") }
        })

    private func block(_ values: [String: String]) -> ConfigurationBlock { ConfigurationBlock(name: "acme", values: values) }

    func testTheDeclarationNamesTheKeysAndTheSecretFiles() {
        XCTAssertEqual(Self.block.keyNames, ["endpoint", "ca_file", "connections", "max_connections", "request_timeout_ms", "mode"])
        XCTAssertEqual(Self.block.appKeyNames, ["topic", "key_file", "channel", "region", "rate"])
        XCTAssertEqual(Self.block.secretFileAppKeys, ["key_file"])
        let description = ProviderDescription(name: "acme", messageRules: AndroidVendorRules(maxPayloadBytes: 4096), block: Self.block)
        XCTAssertEqual(description.settingsKeys, Self.block.keyNames)
        XCTAssertEqual(description.appKeys, Self.block.appKeyNames)
        XCTAssertEqual(description.secretFileAppKeys, ["key_file"])
    }

    func testAnEmptyBlockIsTheDefaults() throws {
        XCTAssertEqual(try Self.block.read(block([:])), Settings())
    }

    func testValuesAreReadTrimmedAndChecked() throws {
        let settings = try Self.block.read(block([
            "endpoint": " https://eu.example.com/ ", "connections": "20", "mode": "careful",
            "apps.0.topic": " com.a ", "apps.0.key_file": "a.key", "apps.0.rate": "7",
            "apps.1.topic": "com.b", "apps.1.key_file": "b.key", "apps.1.region": "https://b.example.com",
        ]))
        XCTAssertEqual(settings.endpoint, "https://eu.example.com")
        XCTAssertEqual(settings.connections, 20)
        XCTAssertEqual(settings.maxConnections, 20, "raised to connections by default")
        XCTAssertEqual(settings.mode, .careful)
        XCTAssertEqual(settings.apps, [App(topic: "com.a", keyFile: "a.key", rate: 7),
                                       App(topic: "com.b", keyFile: "b.key", region: "https://b.example.com")])
    }

    func testABadValueIsAnErrorNamingItsFullKey() {
        let cases: [([String: String], String)] = [
            (["endpoint": "http://x"], "acme.endpoint"),
            (["connections": "0"], "acme.connections"),
            (["connections": "8", "max_connections": "4"], "acme.max_connections"),
            (["mode": "reckless"], "acme.mode"),
            (["apps.0.topic": "com.a", "apps.0.key_file": "k", "apps.0.rate": "many"], "acme.apps.0.rate"),
            (["apps.0.topic": "com.a", "apps.0.key_file": "k", "apps.0.region": "ftp://x"], "acme.apps.0.region"),
            (["apps.0.key_file": "k"], "acme.apps.0.topic"),
            (["apps.0.topic": "com.a", "apps.0.key_file": "k", "apps.1.topic": "com.a", "apps.1.key_file": "k"], "acme.apps.1.topic"),
            (["apps.0.topic": "com.a"], "acme.apps.0"),
        ]
        for (values, key) in cases {
            XCTAssertThrowsError(try Self.block.read(block(values)), "\(values)") { error in
                guard case ConfigurationError.invalid(let named, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(named, key, "\(values)")
            }
        }
    }

    func testTheSummaryShowsEveryKeyWithItsDefaultAndHidesOptionalOnesNotSet() throws {
        let settings = try Self.block.read(block(["apps.0.topic": "com.a", "apps.0.key_file": "/keys/a.key"]))
        XCTAssertEqual(Self.block.summaryLines(settings), [
            "acme.endpoint: https://push.example.com",
            "acme.ca_file: (system CAs)",
            "acme.connections: 2",
            "acme.max_connections: 16",
            "acme.request_timeout_ms: 10000",
            "acme.mode: fast",
            "acme.apps.0: com.a, key_file /keys/a.key, channel (none), rate 100",
        ])
    }
}
