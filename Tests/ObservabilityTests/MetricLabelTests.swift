import PushCore
import XCTest

final class MetricLabelTests: XCTestCase {
    func testReasonsBecomeBoundedLabelValues() {
        XCTAssertEqual(MetricLabel.reason("BadDeviceToken"), "BadDeviceToken")
        XCTAssertEqual(MetricLabel.reason("TopicNotConfigured: no app in apns.apps has topic x"), "TopicNotConfigured")
        XCTAssertEqual(MetricLabel.reason("TransportError: Failure when receiving data"), "TransportError")
        XCTAssertEqual(MetricLabel.reason(""), "")
        // A server's invented reason cannot smuggle quotes, newlines or unbounded length into the exposition.
        XCTAssertEqual(MetricLabel.reason("Bad\"}\nfake_metric 1"), "Badfake_metric1")
        XCTAssertEqual(MetricLabel.reason(String(repeating: "A", count: 500)).count, 64)
        XCTAssertEqual(MetricLabel.reason("\"\n{}"), "other")
    }

    /// Xiaomi's -1 ("unknown error") and 1 are two codes: the sign is kept, so their series stay apart.
    func testANegativeCodeKeepsItsSign() {
        XCTAssertEqual(MetricLabel.reason("-1"), "-1")
        XCTAssertEqual(MetricLabel.reason("1"), "1")
        XCTAssertEqual(MetricLabel.reason("-1: 未知错误"), "-1")
        XCTAssertEqual(MetricLabel.reason("-"), "other", "a dash alone is no code")
        XCTAssertEqual(MetricLabel.reason("-Bad"), "Bad", "only a number keeps a leading dash")
        XCTAssertEqual(MetricLabel.reason(String(repeating: "9", count: 500), keep: MetricLabel.wordCharacters).count, 64)
        XCTAssertEqual(MetricLabel.reason("-" + String(repeating: "9", count: 500)).count, 64)
        XCTAssertEqual(MetricLabel.reason("-1", keep: MetricLabel.topicCharacters), "-1", "where a dash is kept anyway, once")
    }

    func testListenAddresses() throws {
        XCTAssertEqual(try ListenAddress.parse("127.0.0.1:9464"), ListenAddress(host: "127.0.0.1", port: 9464))
        XCTAssertEqual(try ListenAddress.parse("[::1]:0"), ListenAddress(host: "::1", port: 0))
        XCTAssertNil(try ListenAddress.parse(""))
        for bad in ["9464", "host:", ":9464", "::1:9464", "host:70000", "host:-1", "a b:1", "host:１２"] {
            XCTAssertThrowsError(try ListenAddress.parse(bad), bad) { error in
                XCTAssertTrue("\(error)".contains("metrics.listen"), "\(error)")
            }
        }
    }
}
