import Logging
import ProviderKit
import ProviderTesting
import Pusher
import PushCore
import XCTest

/// The smallest provider on the kit (`FakeModule`, the worked example of docs/architecture.md): its block declared
/// once, its lanes described as plans and started by the Pusher, which knows no provider.
final class FakeProviderTests: XCTestCase {
    func testTheBlockIsReadAndShownFromItsDeclaration() throws {
        let module = try FakeModule(block: ConfigurationBlock(name: "fake", values: [
            "endpoint": "https://fake.example", "connections": "3", "apps.0.topic": "com.example.a", "apps.1.topic": "com.example.b",
            "apps.1.batch_limit": "10",
        ]))
        XCTAssertEqual(module.topics, ["com.example.a", "com.example.b"])
        XCTAssertEqual(module.summaryLines, [
            "fake.endpoint: https://fake.example", "fake.ca_file: (system CAs)", "fake.connections: 3", "fake.max_connections: 4",
            "fake.request_timeout_ms: 10000", "fake.apps.0: com.example.a, batch_limit 1000", "fake.apps.1: com.example.b, batch_limit 10",
        ])
        XCTAssertEqual(FakeModule.description.appKeys, ["topic", "batch_limit"])
    }

    func testThePusherStartsTheModulesLanesAndEndsThem() async throws {
        var settings = FakeModule.Settings()
        settings.connections = 4
        settings.apps = [FakeModule.App(topic: "com.example.a"), FakeModule.App(topic: "com.example.b", batchLimit: 10)]
        let module = FakeModule(settings: settings)
        let plans = try module.makeLanes(LaneContext(logger: Logger(label: "test"), readiness: nil, cores: 4))
        XCTAssertEqual(plans.map(\.app), ["com.example.a", "com.example.b"])
        XCTAssertEqual(plans.map(\.lanes.count), [2, 2], "one lane per two cores, at most the connections")
        XCTAssertEqual(plans[1].lanes.map(\.service.batchLimit), [10, 10])
        XCTAssertEqual(plans[0].lanes.map(\.settings.initialConnections), [2, 2], "the connections shared among the lanes")
        XCTAssertEqual(plans[0].lanes.map(\.settings.lane), [0, 1])

        let pusher = try Pusher(providers: [module], retry: RetrySettings(), logger: Logger(label: "test"), sink: { _ in })
        XCTAssertEqual(Set(pusher.openConnections.map(\.app)), ["com.example.a", "com.example.b"])
        let (input, continuation) = AsyncStream<[PushJob]>.makeStream()
        continuation.finish()
        await pusher.run(input: input)
        XCTAssertEqual(pusher.outstanding, 0)
    }
}
