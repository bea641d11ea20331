import Foundation
import PushCore

/// A v3 app's bearer (HarmonyOS 5+ has no token exchange): a JWT the service account signs itself, PS256, header
/// `{"alg":"PS256","kid":<key_id>,"typ":"JWT"}`, claims `iss` = `sub_account`, `aud` = the key file's `token_uri`
/// (else `huawei.token_uri`), `iat` and `exp` = `iat` + 3600 (Huawei advises an hour and refuses over a day with
/// 80300036).
///
/// One JWT is reused by every request and lane of the app until half its life has passed, then signed anew: a
/// signature per request (as some open-source senders do) is legal but costs an RSA operation each, and renewing
/// at half life leaves half an hour for a clock that drifts or a request that waits. Each new JWT is a new
/// `generation`, so the scheduler rebuilds the headers that carry it. Signing takes a millisecond or two of CPU
/// and no I/O, so it runs on the lane's own thread when a JWT is asked for.
public final class HuaweiJWTSigner: @unchecked Sendable, CustomStringConvertible {
    public static let lifetimeSeconds: Int64 = 3600

    public let projectID: String
    public let keyID: String
    public let subAccount: String
    public let audience: String
    private let key: PS256Key
    private let now: @Sendable () -> Int64
    private let state = Locked(State())

    private struct State {
        var jwt: Secret?
        var issuedAt: Int64 = 0
        var generation = 0
        /// A server rejected the JWT of this generation: the next read signs a new one.
        var stale = false
    }

    /// - Parameters:
    ///   - defaultAudience: `huawei.token_uri`, the `aud` when the key file names no `token_uri`.
    ///   - now: Unix seconds (tests pass their own).
    public init(account: HuaweiServiceAccount, defaultAudience: String = HuaweiSettings.productionTokenURI,
                now: @escaping @Sendable () -> Int64 = { WallClock.nowSeconds() }) throws(HuaweiCredentialError) {
        key = try PS256Key(pem: account.privateKeyPEM, file: account.file)
        projectID = account.projectID
        keyID = account.keyID
        subAccount = account.subAccount
        audience = account.tokenURI ?? defaultAudience
        self.now = now
    }

    public var description: String { "HuaweiJWTSigner(project \(projectID), key \(keyID), aud \(audience))" }

    /// The JWT to send now and its generation: the one in use while less than half its life has passed (and the
    /// clock has not gone back past its `iat`), else a new one. A failure to sign is the caller's refusal: no
    /// request of the app can go without it.
    public func current() throws(HuaweiSigningError) -> (jwt: Secret, generation: Int) {
        let time = now()
        return try state.withLock { (state: inout State) throws(HuaweiSigningError) -> (jwt: Secret, generation: Int) in
            if let jwt = state.jwt, !state.stale, time >= Self.saturatingSum(state.issuedAt, -60),
               time < Self.saturatingSum(state.issuedAt, Self.lifetimeSeconds / 2) {
                return (jwt, state.generation)
            }
            let jwt = Secret(try token(issuedAt: time))
            state.jwt = jwt
            state.issuedAt = time
            state.generation += 1
            state.stale = false
            return (jwt, state.generation)
        }
    }

    /// The generation of the JWT in use (0 before the first).
    public var generation: Int { state.withLock { $0.generation } }

    /// A server rejected the JWT of `generation` (80200005 expired, 80200001): unless a newer one exists, the next
    /// `current()` signs a new one. Returns whether this call did so (of many requests reporting one JWT, the first).
    @discardableResult
    public func renew(generation: Int) -> Bool {
        state.withLock { state in
            guard generation == state.generation, !state.stale else { return false }
            state.stale = true
            return true
        }
    }

    /// `base64url(header).base64url(claims).base64url(signature)`, issued at `issuedAt` (Unix seconds).
    public func token(issuedAt: Int64) throws(HuaweiSigningError) -> String {
        let header = JSONValue.object([
            JSONMember(key: "alg", value: .string("PS256")),
            JSONMember(key: "kid", value: .string(keyID)),
            JSONMember(key: "typ", value: .string("JWT")),
        ])
        let claims = JSONValue.object([
            JSONMember(key: "aud", value: .string(audience)),
            JSONMember(key: "exp", value: .number(String(Self.saturatingSum(issuedAt, Self.lifetimeSeconds)))),
            JSONMember(key: "iat", value: .number(String(issuedAt))),
            JSONMember(key: "iss", value: .string(subAccount)),
        ])
        let signingInput = Base64URL.encode(JSONWriter.canonical(header)) + "." + Base64URL.encode(JSONWriter.canonical(claims))
        return signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
    }

    /// A clock near Int64's end must not trap.
    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }
}
