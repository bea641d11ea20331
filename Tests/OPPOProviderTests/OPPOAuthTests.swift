@testable import OPPOProvider
import ProviderKit
import PushCore
import XCTest

/// OPPO's auth call: the sign OPPO documents, and its answers read into a token with the time it has left.
final class OPPOAuthTests: XCTestCase {
    func testTheSignIsTheLowerCaseSHA256OfKeyTimestampAndSecret() {
        // python3 -c "import hashlib; print(hashlib.sha256(b'key1700000000000secret').hexdigest())"
        XCTAssertEqual(OPPOAuth.sign(appKey: "key", timestamp: 1_700_000_000_000, masterSecret: Secret("secret")),
                       "ee412f504f93d283888979ab4f37e98beb471243575d468a4048c57285abad84")
    }

    func testATokenIsGoodForADayFromWhenOPPOMadeIt() {
        let now: Int64 = 1_700_000_000_000
        let grant = OPPOAuth.classify(status: 200, body: Array(#"{"code":0,"data":{"auth_token":"abc","create_time":\#(now - 3_600_000)}}"#.utf8),
                                      nowMillis: now, uri: "u")
        XCTAssertEqual(grant, .granted(accessToken: Secret("abc"), expiresIn: 82_800))
    }

    func testABadSignIsRefusedAndFlowControlIsAWait() {
        guard case .refused = OPPOAuth.classify(status: 200, body: Array(#"{"code":16,"message":"Invalid Sign"}"#.utf8), nowMillis: 0, uri: "u")
        else { return XCTFail("a bad sign is refused") }
        guard case .unavailable = OPPOAuth.classify(status: 200, body: Array(#"{"code":-2}"#.utf8), nowMillis: 0, uri: "u")
        else { return XCTFail("flow control is a wait") }
        guard case .unavailable = OPPOAuth.classify(status: 502, body: Array("<html>".utf8), nowMillis: 0, uri: "u")
        else { return XCTFail("no code is a wait") }
    }
}
