import Observability
import PushCore
import XCTest

final class HealthRoutesTests: XCTestCase {
    private func routes(_ readiness: Readiness) -> HealthRoutes {
        HealthRoutes(readiness: readiness) { Array("push_build_info{version=\"x\"} 1\n".utf8) }
    }

    private func text(_ response: HealthRoutes.Response) -> String { String(decoding: response.body, as: UTF8.self) }

    func testReadinessStartsFalseAndFollowsEveryCondition() {
        let readiness = Readiness()
        let routes = routes(readiness)
        XCTAssertEqual(routes.respond(method: "GET", path: "/readyz").status, 503)
        XCTAssertTrue(text(routes.respond(method: "GET", path: "/readyz")).contains("starting"))
        readiness.clear(.starting)
        XCTAssertEqual(routes.respond(method: "GET", path: "/readyz").status, 200)

        readiness.set(.redisUnreachable(shard: "push:queue"))
        readiness.set(.credentialsRejected(app: "com.example.chat", reason: "InvalidProviderToken", service: "APNs"))
        let both = routes.respond(method: "GET", path: "/readyz")
        XCTAssertEqual(both.status, 503)
        XCTAssertEqual(text(both), "not ready: Redis unreachable (push:queue)\n", "the pod's own reasons only")
        readiness.clear(.redisUnreachable(shard: "push:queue"))
        let held = routes.respond(method: "GET", path: "/readyz")
        XCTAssertEqual(held.status, 200, "one app's refused key never takes the pod out of service")
        XCTAssertEqual(text(held), "ready; apps held: APNs rejected the credentials of com.example.chat: InvalidProviderToken\n")
        readiness.setCredentialWait(app: "com.example.other", reason: "token endpoint unreachable")
        XCTAssertEqual(routes.respond(method: "GET", path: "/readyz").status, 200)
        XCTAssertTrue(readiness.isReady)
        readiness.clearCredentials(app: "com.example.chat")
        readiness.clearCredentialWait(app: "com.example.other")
        XCTAssertNil(readiness.heldApps)
        XCTAssertEqual(text(routes.respond(method: "GET", path: "/readyz")), "ready\n")

        readiness.set(.draining)
        XCTAssertEqual(text(routes.respond(method: "GET", path: "/readyz")), "not ready: draining: shutting down, no new claims\n")
    }

    func testLivenessStaysTrueWhileNotReady() {
        let readiness = Readiness()
        readiness.set(.draining)
        let response = routes(readiness).respond(method: "GET", path: "/healthz")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(text(response), "ok\n")
    }

    func testMetricsAreServedInTheExpositionFormatAndUnknownPathsAreNamed() {
        let routes = routes(Readiness(starting: false))
        let metrics = routes.respond(method: "GET", path: "/metrics?name[]=x")
        XCTAssertEqual(metrics.status, 200)
        XCTAssertEqual(metrics.contentType, "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertTrue(text(metrics).hasPrefix("push_build_info"))
        let missing = routes.respond(method: "GET", path: "/nope")
        XCTAssertEqual(missing.status, 404)
        XCTAssertTrue(text(missing).contains("/readyz"))
        XCTAssertEqual(routes.respond(method: "POST", path: "/metrics").status, 405)
    }
}
