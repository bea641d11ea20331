@testable import FCMProvider
import PushCore
import XCTest

final class PushHeadersTests: XCTestCase {
    /// FCM's rules are its module's: registered, as the worker registers it at start-up.
    override class func setUp() {
        super.setUp()
        _ = PushProvider.fcm
    }

    /// The header cache compares jobs' headers with `same` (borrowed) instead of `==`: the two must agree, for a
    /// change in any one field.
    func testSameAgreesWithEqualityForEveryField() {
        let base = PushHeaders(topic: "com.example.chat.voip", appTopic: "com.example.chat", pushType: "voip", priority: 10,
                               expiration: 0, collapseID: "c1")
        var variants: [PushHeaders] = [base]
        var changed = base
        changed.topic = "com.example.other.voip"; variants.append(changed)
        changed = base; changed.appTopic = "com.example.other"; variants.append(changed)
        changed = base; changed.pushType = "alert"; variants.append(changed)
        changed = base; changed.priority = 5; variants.append(changed)
        changed = base; changed.expiration = 1; variants.append(changed)
        changed = base; changed.collapseID = nil; variants.append(changed)
        changed = base; changed.collapseID = "c2"; variants.append(changed)
        changed = base; changed.provider = .fcm; variants.append(changed)
        for a in variants {
            for b in variants {
                XCTAssertEqual(PushHeaders.same(a, b), a == b, "\(a) against \(b)")
            }
        }
        // A field added to PushHeaders must be added to `same` and to the variants above.
        XCTAssertEqual(Mirror(reflecting: base).children.count, 7, "PushHeaders' fields changed: update PushHeaders.same")
    }
}
