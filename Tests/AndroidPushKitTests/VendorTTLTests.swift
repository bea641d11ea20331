import AndroidPushKit
import XCTest

/// Each vendor's ttl from a message's `expiration`: the seconds left when the request is made, between the vendor's
/// shortest and longest, none when the message has no expiration; no input traps.
final class VendorTTLTests: XCTestCase {
    func testTheSecondsLeftWithinTheVendorsBounds() {
        let day = VendorTTL(maxSeconds: 86_400, shortestSeconds: 60)
        let now: Int64 = 1_767_225_600
        XCTAssertNil(day.seconds(expiration: nil, nowSeconds: now), "none given: the vendor's default")
        XCTAssertEqual(day.seconds(expiration: 0, nowSeconds: now), 60, "0: the shortest the vendor allows")
        XCTAssertEqual(day.seconds(expiration: now + 10, nowSeconds: now), 60)
        XCTAssertEqual(day.seconds(expiration: now + 3600, nowSeconds: now), 3600)
        XCTAssertEqual(day.seconds(expiration: now + 30 * 86_400, nowSeconds: now), 86_400, "at most the vendor's longest")
        XCTAssertEqual(day.seconds(expiration: .max, nowSeconds: -now), 86_400, "no overflow")
        XCTAssertEqual(day.seconds(expiration: .min, nowSeconds: now), 60)
        XCTAssertEqual(VendorTTL(maxSeconds: 1_296_000).seconds(expiration: now - 5, nowSeconds: now), 1, "past: the kit's shortest, 1 s")
    }

    func testClassValuesPickTheMessagesClass() {
        let values = ClassValues(chat: "IM", system: "ACCOUNT", bulk: "")
        XCTAssertEqual(values[.chat], "IM")
        XCTAssertEqual(values[.system], "ACCOUNT")
        XCTAssertEqual(values[.bulk], "")
    }
}
