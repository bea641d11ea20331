@testable import APNsProvider
import COpenSSL
import Foundation
import Pusher
import PushCore
import TestSupport
import XCTest

final class ProviderTokenTests: XCTestCase {
    var keyFile: String!

    override func setUp() async throws {
        keyFile = try generateP8Key(in: makeTemporaryDirectory("keys"))
    }

    func testTokenIsAnES256JWTThatVerifiesWithThePublicKey() throws {
        let signer = try JWTSigner(keyFile: keyFile, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let jwt = try signer.token(issuedAt: 1_800_000_000)
        let parts = jwt.split(separator: ".").map(String.init)
        XCTAssertEqual(parts.count, 3)
        XCTAssertEqual(jsonObject(base64URLDecode(parts[0])) as NSDictionary, ["alg": "ES256", "kid": "ABC123DEFG"])
        XCTAssertEqual(jsonObject(base64URLDecode(parts[1])) as NSDictionary, ["iss": "DEF123GHIJ", "iat": 1_800_000_000])
        let signature = base64URLDecode(parts[2])
        XCTAssertEqual(signature.count, 64, "JWS ES256 signatures are raw r||s")
        XCTAssertTrue(verify(signature: signature, message: Array("\(parts[0]).\(parts[1])".utf8)))
        XCTAssertFalse(verify(signature: signature, message: Array("\(parts[0]).e30".utf8)), "a tampered token fails")
    }

    func testBadKeyFilesAreNamed() throws {
        XCTAssertThrowsError(try JWTSigner(keyFile: "/nonexistent.p8", keyID: "K", teamID: "T")) {
            XCTAssertEqual("\($0)", "APNs key /nonexistent.p8: file not found or not readable")
        }
        let junk = NSTemporaryDirectory() + "junk-\(UUID().uuidString).p8"
        try "hello".write(toFile: junk, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try JWTSigner(keyFile: junk, keyID: "K", teamID: "T")) {
            XCTAssertTrue("\($0)".contains("not a PEM private key"))
        }
    }

    func testRenewedAfterFiftyMinutesAndNeverWithinTwenty() throws {
        let now = Locked<Int64>(1_000_000)
        let token = ProviderToken(signer: try JWTSigner(keyFile: keyFile, keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
                                  clock: { now.withLock { $0 } })
        let first = try token.current()
        XCTAssertEqual(first.issuedAt, 1_000_000)
        now.withLock { $0 += 10 * 60 }
        XCTAssertEqual(try token.current(), first, "shared, not re-signed per request")
        XCTAssertFalse(try token.expired(generation: first.generation), "APNs said expired, but no renewal within 20 minutes")
        XCTAssertEqual(try token.current(), first)
        now.withLock { $0 = 1_000_000 + 21 * 60 }
        XCTAssertTrue(try token.expired(generation: first.generation))
        let renewed = try token.current()
        XCTAssertEqual(renewed.generation, 2)
        XCTAssertEqual(renewed.issuedAt, 1_000_000 + 21 * 60)
        XCTAssertTrue(try token.expired(generation: first.generation), "a stale report does not renew twice")
        XCTAssertEqual(try token.current().generation, 2)
        now.withLock { $0 = renewed.issuedAt + 49 * 60 }
        XCTAssertEqual(try token.current().generation, 2)
        now.withLock { $0 = renewed.issuedAt + 51 * 60 }
        XCTAssertEqual(try token.current().generation, 3, "renewed after about 50 minutes")
    }

    private func base64URLDecode(_ text: String) -> [UInt8] {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Array(Data(base64Encoded: base64) ?? Data())
    }

    /// Verifies r||s with OpenSSL, independently of the signer's code path.
    private func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        guard let pem = FileManager.default.contents(atPath: keyFile) else { return false }
        let key: OpaquePointer? = pem.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key, let sig = ECDSA_SIG_new() else { return false }
        defer { EVP_PKEY_free(key) }
        defer { ECDSA_SIG_free(sig) }
        ECDSA_SIG_set0(sig, BN_bin2bn(signature, 32, nil), BN_bin2bn(Array(signature[32...]), 32, nil))
        var derPointer: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(sig, &derPointer)
        guard length > 0, let derPointer else { return false }
        defer { CRYPTO_free(derPointer, #file, #line) }
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, derPointer, Int(length), message, message.count) == 1
    }
}
