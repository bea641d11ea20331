import APNsProvider
import PushCore
import XCTest

/// A provider module as the core sees it: registered by name with its message rules and configuration keys, then
/// parsed, configured and named like APNs without the core naming it. The module here is a made-up vendor,
/// `acme`, registered in this test process.
final class ProviderRegistryTests: XCTestCase {
    /// The default provider's message rules are its module's: registered, as the worker registers it.
    override class func setUp() {
        super.setUp()
        _ = APNsModule.provider
    }

    static let acme = PushProvider.register(ProviderDescription(
        name: "acme", messageRules: AndroidVendorRules(maxPayloadBytes: 200, maxTitleCharacters: 10, maxBodyCharacters: 20),
        settingsKeys: ["endpoint", "connections"], appKeys: ["topic", "secret_file"]))

    private let parser = MessageParser()
    private let now: Int64 = 1_800_000_000

    private func parse(_ text: String) -> ParsedElement {
        _ = Self.acme
        return parser.parse(Array(text.utf8), seq: 7, now: now)
    }

    private func element(payload: String = #"{"notification":{"title":"Alice","body":"hi"},"data":{"cid":"c1"}}"#,
                         tokens: String = #"["tok-1","tok-2"]"#, extra: String = "") -> String {
        #"{"id":"m1","topic":"com.example.chat","provider":"acme","tokens":\#(tokens),"payload":\#(payload)\#(extra)}"#
    }

    private func reason(_ text: String) -> String? {
        if case .invalid(let reason, _) = parse(text) { return reason }
        return nil
    }

    func testARegisteredProviderIsNamedAndNumberedLikeTheBuiltInOnes() {
        let acme = Self.acme
        XCTAssertEqual(PushProvider(rawValue: "acme"), acme)
        XCTAssertEqual(acme.rawValue, "acme")
        XCTAssertGreaterThan(acme.index, PushProvider.apns.index)
        XCTAssertEqual(PushProvider.register(ProviderDescription(name: "acme", messageRules: AndroidVendorRules(),
                                                                 settingsKeys: [], appKeys: [])), acme, "registering again: the same")
        XCTAssertEqual(acme.vendorRules?.maxTitleCharacters, 10, "the first registration's rules stay")
        XCTAssertTrue(PushProvider.allCases.contains(acme))
        XCTAssertTrue(PushProvider.namesForErrors.contains(#""acme""#), PushProvider.namesForErrors)
        XCTAssertNil(PushProvider(rawValue: "Acme"), "names are exact")
        XCTAssertNil(PushProvider.apns.vendorRules)
    }

    func testAVendorMessageKeepsItsPayloadAndTokensAsWritten() throws {
        guard case .valid(let message, let rejected) = parse(element(extra: #","collapse_id":"chat-1","expiration":1800003600"#)) else {
            return XCTFail("\(parse(element()))")
        }
        XCTAssertEqual(message.headers.provider, Self.acme)
        XCTAssertEqual(message.headers.appTopic, "com.example.chat")
        XCTAssertEqual(message.headers.collapseID, "chat-1")
        XCTAssertEqual(message.headers.expiration, 1_800_003_600)
        XCTAssertEqual(String(decoding: message.payload, as: UTF8.self), #"{"data":{"cid":"c1"},"notification":{"body":"hi","title":"Alice"}}"#)
        XCTAssertEqual(message.tokens, ["tok-1", "tok-2"])
        XCTAssertEqual(rejected, [])
    }

    func testATokenWithASpaceOrACommaOrTooLongGoesToFeedbackAndTheRestAreSent() throws {
        let long = String(repeating: "x", count: 1025)
        guard case .valid(let message, let rejected) = parse(element(tokens: #"["ok-1","a,b","a b","\#(long)","ok-1","ok-2"]"#)) else {
            return XCTFail("valid")
        }
        XCTAssertEqual(message.tokens, ["ok-1", "ok-2"], "listed twice: sent once")
        XCTAssertEqual(rejected, ["a,b", "a b", long])
        XCTAssertEqual(reason(element(tokens: #"["a,b"]"#)), "Malformed: tokens[0] is not a vendor push token")
    }

    func testWhatTheVendorRefusesForEveryTokenIsADeadLetterAtOnce() {
        XCTAssertEqual(reason(element(payload: #"{"notification":{"title":"A title over ten"}}"#)),
                       "Malformed: payload.notification.title is 16 characters, over acme's 10")
        XCTAssertEqual(reason(element(payload: #"{"notification":{"subtitle":"x"}}"#)),
                       "Malformed: payload.notification.subtitle is not a field of the common notification (title, body, image); put the vendor's own in payload.acme")
        XCTAssertEqual(reason(element(payload: #"{"data":{"n":1}}"#)), "Malformed: payload.data.n is a number, not a string")
        XCTAssertEqual(reason(element(payload: #"{"android":{}}"#)),
                       "Malformed: payload.android is not a field of a acme message (allowed: data, notification, acme)")
        XCTAssertEqual(reason(element(payload: #"{"acme":"x"}"#)), "Malformed: payload.acme is a string, not an object")
        XCTAssertEqual(reason(element(payload: #"{"data":{"k":"\#(String(repeating: "v", count: 200))"}}"#)),
                       "Malformed: payload is 217 bytes, over the 200-byte limit for acme")
        XCTAssertEqual(reason(element(extra: #","push_type":"alert""#)), #"Malformed: push_type is for apns messages only: not allowed with provider "acme""#)
        XCTAssertEqual(reason(element(extra: #","expiration":1"#)), "Expired")
        if case .valid = parse(element(payload: #"{"acme":{"anything":{"goes":[1,2]}}}"#)) {} else { XCTFail("the vendor's object goes as it is") }
    }

    func testTheModulesBlockIsReadWithItsKeysAndTheEnvironment() throws {
        _ = Self.acme
        let yaml = """
        acme:
          endpoint: https://push.example.com
          connections: 3
          apps:
            - topic: com.example.chat
              secret_file: /run/secrets/acme
            - topic: com.example.other
        """
        let configuration = try ConfigurationLoader(environment: ["ACME_APPS_1_SECRET_FILE": "from-env", "ACME_CONNECTIONS": "4"])
            .load(yaml: yaml)
        let block = try XCTUnwrap(configuration.providerBlocks["acme"])
        XCTAssertEqual(block.string("endpoint", ""), "https://push.example.com")
        XCTAssertEqual(try block.int("connections", 1, min: 1), 4, "the environment wins")
        XCTAssertEqual(block.appTopics, ["com.example.chat", "com.example.other"])
        XCTAssertEqual(block.values["apps.1.secret_file"], "from-env")
        XCTAssertEqual(configuration.appTopics(of: Self.acme), ["com.example.chat", "com.example.other"])
        XCTAssertThrowsError(try block.int("endpoint", 1, min: 1)) {
            XCTAssertEqual("\($0)", "configuration acme.endpoint: 'https://push.example.com' is not a whole number")
        }
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(yaml: "acme:\n  endpont: x\n")) {
            XCTAssertEqual("\($0)", "configuration: unknown key 'acme.endpont'")
        }
        XCTAssertThrowsError(try ConfigurationLoader(environment: [:]).load(yaml: "acme:\n  apps:\n    - topic: t\n      secret: x\n")) {
            XCTAssertEqual("\($0)", "configuration: unknown key 'acme.apps.0.secret'")
        }
        XCTAssertEqual(try ConfigurationLoader(environment: [:]).load(yaml: "").providerBlocks["acme"]?.values, [:],
                       "an empty block when the file has none")
    }
}
