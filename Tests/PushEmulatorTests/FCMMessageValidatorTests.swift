@testable import FCMProvider
import Foundation
@testable import PushEmulator
import XCTest

/// FCM's rules for a `messages:send` body and its error bodies, without a server.
final class FCMMessageValidatorTests: XCTestCase {
    private let validator = FCMMessageValidator()

    private func accepted(_ body: String, file: StaticString = #filePath, line: UInt = #line) -> FCMMessageValidator.Accepted? {
        switch validator.validate(Array(body.utf8)) {
        case .success(let accepted): return accepted
        case .failure(let error):
            XCTFail("refused: \(error.message)", file: file, line: line)
            return nil
        }
    }

    private func refusal(_ body: String) -> FCMError? {
        if case .failure(let error) = validator.validate(Array(body.utf8)) { return error }
        return nil
    }

    /// The exact bodies senders parse: a rejected access token has no details at all (the sender renews it);
    /// message errors carry the FcmError detail first.
    func testErrorBodiesAreGooglesShape() throws {
        XCTAssertEqual(FCMError.invalidCredentials.json, #"{"error":{"code":401,"message":"Request had invalid authentication credentials. "#
            + #"Expected OAuth 2 access token, login cookie or other valid authentication credential. "#
            + #"See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED"}}"#)
        XCTAssertEqual(FCMError.unregistered.json, #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","#
            + #""details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#)
        let invalid = try XCTUnwrap(refusal(#"{"message":{"token":"t","data":{"n":1}}}"#))
        let body = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(invalid.json.utf8)) as? [String: Any])
        let error = try XCTUnwrap(body["error"] as? [String: Any])
        XCTAssertEqual(error["code"] as? Int, 400)
        XCTAssertEqual(error["status"] as? String, "INVALID_ARGUMENT")
        let details = try XCTUnwrap(error["details"] as? [[String: Any]])
        XCTAssertEqual(details.first?["@type"] as? String, "type.googleapis.com/google.firebase.fcm.v1.FcmError")
        XCTAssertEqual(details.first?["errorCode"] as? String, "INVALID_ARGUMENT")
        XCTAssertEqual(invalid.reason, "INVALID_ARGUMENT")
        XCTAssertEqual(FCMError.permissionDenied(project: "p").reason, "PERMISSION_DENIED", "no FcmError: the status is the reason")
    }

    func testClientTextInAnErrorStaysValidJSON() throws {
        let error = try XCTUnwrap(refusal(#"{"message":{"token":"t","we\"ird\\\n":1}}"#))
        XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(error.json.utf8)), error.json)
    }

    func testTheTargetAndValidateOnly() {
        XCTAssertEqual(accepted(#"{"message":{"token":"abc:DEF_1-2.3"}}"#), .init(token: "abc:DEF_1-2.3", validateOnly: false))
        XCTAssertEqual(accepted(#"{"validateOnly":true,"message":{"token":"t"}}"#)?.validateOnly, true)
        XCTAssertEqual(accepted(#"{"message":{"token":"t","topic":null}}"#)?.token, "t", "null is absent, as in proto JSON")
        XCTAssertEqual(refusal(#"{"message":{"token":""}}"#), FCMError.invalidRegistrationToken)
        XCTAssertEqual(refusal(#"{"message":{"token":"a/b"}}"#), FCMError.invalidRegistrationToken)
        XCTAssertEqual(refusal(#"{"message":{"token":7}}"#)?.field, "message.token")
        XCTAssertNotNil(refusal(#"{"validate_only":"yes","message":{"token":"t"}}"#))
        XCTAssertNotNil(refusal(#"[1]"#))
        XCTAssertNotNil(refusal(#"{}"#))
    }

    func testAndroidFields() {
        for ttl in ["0s", "1s", "3.5s", "2419200s", "0.000000001s"] {
            XCTAssertNotNil(accepted(#"{"message":{"token":"t","android":{"ttl":"\#(ttl)"}}}"#), ttl)
        }
        for ttl in ["1", "s", "-1s", "1.s", ".5s", "1.0000000001s", "2419201s", "1e3s"] {
            XCTAssertNotNil(refusal(#"{"message":{"token":"t","android":{"ttl":"\#(ttl)"}}}"#), ttl)
        }
        for priority in ["high", "normal", "HIGH", "NORMAL"] {
            XCTAssertNotNil(accepted(#"{"message":{"token":"t","android":{"priority":"\#(priority)"}}}"#), priority)
        }
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","android":{"priority":10}}}"#))
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","android":{"direct_boot_ok":"yes"}}}"#))
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","android":{"data":{"k":2}}}}"#))
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","android":{"notification":{"colour":"red"}}}}"#))
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","notification":{"title":1}}}"#))
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","notification":{"subtitle":"x"}}}"#))
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","data":{"google.x":"y"}}}"#))
    }

    /// Keys and values are counted, never quotes or spacing, and never the target: 4,096 bytes measured in
    /// any compact serialization always pass.
    /// What production refuses, the emulator refuses too: field types in `android.notification`, and the
    /// contents of `apns`, `webpush` and `fcm_options`.
    func testTypesInAndroidNotificationAndTheOtherPlatformsBlocks() {
        let token = "d1:APA91b" + String(repeating: "x", count: 140)
        func body(_ extra: String) -> String { #"{"message":{"token":"\#(token)",\#(extra)}}"# }
        for (extra, field) in [
            (#""android":{"notification":{"sticky":1}}"#, "message.android.notification.sticky"),
            (#""android":{"notification":{"title":5}}"#, "message.android.notification.title"),
            (#""android":{"notification":{"body_loc_args":["a",1]}}"#, "message.android.notification.body_loc_args"),
            (#""android":{"notification":{"notification_count":"2"}}"#, "message.android.notification.notification_count"),
            (#""apns":{"headers":{"apns-priority":10}}"#, "message.apns.headers.apns-priority"),
            (#""webpush":{"data":{"a":1}}"#, "message.webpush.data.a"),
            (#""fcm_options":{"analytics_label":1}"#, "message.fcm_options.analytics_label"),
        ] {
            XCTAssertEqual(refusal(body(extra))?.field, field, extra)
        }
        XCTAssertEqual(refusal(body(#""apns":{"unknown":{}}"#))?.field, "message.apns")
        XCTAssertNotNil(accepted(body(#""android":{"notification":{"sticky":true,"notification_count":3,"title_loc_args":["a"]}},"apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{}}},"fcm_options":{"analytics_label":"l"}"#)))
    }

    func testThePayloadSizeCountsKeysAndValues() {
        XCTAssertEqual(FCMMessageValidator.payloadSize(["token": "abc", "data": ["k": "vv"]]), 4 + 1 + 2)
        XCTAssertEqual(FCMMessageValidator.payloadSize(["android": ["ttl": "1s", "direct_boot_ok": true]]), 7 + 3 + 2 + 14 + 4)
        let exactly = String(repeating: "x", count: 4096 - "data".count - "k".count)
        XCTAssertNotNil(accepted(#"{"message":{"token":"t","data":{"k":"\#(exactly)"}}}"#))
        XCTAssertNotNil(refusal(#"{"message":{"token":"t","data":{"k":"\#(exactly)x"}}}"#))
    }

    func testTheJudgeChecksInGooglesOrder() {
        var configuration = EmulatorConfiguration()
        configuration.fcmServiceAccounts = [.init(clientEmail: "a@proj.iam.gserviceaccount.com", privateKeyID: "k", keyFile: "/nonexistent")]
        let registry = AccessTokenRegistry(lifetimeSeconds: 60)
        let judge = FCMSendJudge(configuration: configuration, registry: registry, faults: FCMFaultInjector(FCMFaults()))
        let bearer = registry.issue(clientEmail: "a@proj.iam.gserviceaccount.com", now: 1000).token
        func answer(_ path: String = "/v1/projects/proj/messages:send", method: String = "POST", bearer: String? = nil,
                    body: String = "not json") -> FCMAnswer {
            judge.judge(IncomingRequest(method: method, path: path, headers: bearer.map { [("authorization", "Bearer \($0)")] } ?? [],
                                        body: Array(body.utf8)), now: 1001, random: { 0.5 })
        }
        XCTAssertEqual(answer("/v1/projects/proj/messages:sendx", bearer: bearer).status, 404)
        XCTAssertEqual(answer("/v1/projects/a/b/messages:send", bearer: bearer).status, 404)
        XCTAssertEqual(answer(method: "GET", bearer: bearer).status, 405)
        XCTAssertEqual(answer().error, .missingCredentials)
        XCTAssertEqual(answer(bearer: "nope").error, .invalidCredentials, "before the body is looked at")
        XCTAssertEqual(answer("/v1/projects/other/messages:send", bearer: bearer).error?.status, "PERMISSION_DENIED")
        XCTAssertEqual(answer(bearer: bearer).status, 400)
        XCTAssertEqual(answer(bearer: bearer, body: #"{"message":{"token":"unregistered-x"}}"#).error, .unregistered)
        let good = answer("/v1/projects/proj/messages:send?alt=json", bearer: bearer, body: #"{"message":{"token":"t"}}"#)
        XCTAssertEqual(good.status, 200)
        XCTAssertEqual(good.token, "t")
        XCTAssertTrue(good.body.hasPrefix(#"{"name":"projects/proj/messages/0:1001000%"#), good.body)
        XCTAssertNil(good.retryAfter)
    }

    func testTheProjectComesFromTheAccount() {
        XCTAssertEqual(EmulatorConfiguration.ServiceAccountKey(clientEmail: "w@my-proj.iam.gserviceaccount.com", privateKeyID: "k",
                                                               keyFile: "f").projectID, "my-proj")
        XCTAssertNil(EmulatorConfiguration.ServiceAccountKey(clientEmail: "someone@example.com", privateKeyID: "k", keyFile: "f").projectID)
        XCTAssertEqual(EmulatorConfiguration.ServiceAccountKey(clientEmail: "someone@example.com", privateKeyID: "k", keyFile: "f",
                                                               projectID: "given").projectID, "given")
    }

    func testFaultDrawsAndRetryAfter() {
        let injector = FCMFaultInjector(FCMFaults())
        XCTAssertNil(injector.draw(random: { 0 }))
        injector.update {
            $0.quotaExceededRate = 0.25
            $0.unavailableRate = 0.25
            $0.retryAfterSeconds = 5
        }
        XCTAssertEqual(injector.draw(random: { 0.1 }), .quotaExceeded)
        XCTAssertEqual(injector.draw(random: { 0.3 }), .unavailable)
        XCTAssertNil(injector.draw(random: { 0.6 }))
        injector.queue(.internalError, count: 1)
        XCTAssertEqual(injector.draw(random: { 0.9 }), .internalError, "queued answers come first")
        XCTAssertEqual(injector.retryAfter(status: 429), "5")
        XCTAssertNil(injector.retryAfter(status: 500))
        XCTAssertEqual(FCMFaultInjector.httpDate(Date(timeIntervalSince1970: 784111777)), "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
