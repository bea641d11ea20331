import Foundation

/// The answer to one `messages:send` request.
public struct FCMAnswer: Sendable, Equatable {
    public var status: Int
    /// The JSON body: `{"name": ...}` or Google's error.
    public var body: String
    /// Nil on success.
    public var error: FCMError?
    /// The message's target, when the body named one that was well formed.
    public var token: String?
    /// A `validate_only` request that passed: nothing was delivered.
    public var validatedOnly = false
    /// The bearer was a valid access token (on the APNs listener this raises the stream limit, as a JWT does).
    public var authenticated = false
    /// `Retry-After` (429 and 503, when the faults ask for it).
    public var retryAfter: String?
}

/// FCM HTTP v1's `POST /v1/projects/<project_id>/messages:send`, in the order Google checks: the path, the
/// access token (`AccessTokenRegistry`), the service account's rights on the project, the message
/// (`FCMMessageValidator`), then the token's fate (by prefix, `fcmTokenAnswers`) and the injected faults.
struct FCMSendJudge: Sendable {
    static let pathPrefix = "/v1/projects/"
    static let pathSuffix = "/messages:send"

    let registry: AccessTokenRegistry
    let faults: FCMFaultInjector
    let validator = FCMMessageValidator()
    /// Service account email -> the projects it may send to.
    let projects: [String: Set<String>]
    let tokenAnswers: [EmulatorConfiguration.FCMTokenAnswer]
    let deviceRate = FCMDeviceRate()

    init(configuration: EmulatorConfiguration, registry: AccessTokenRegistry, faults: FCMFaultInjector) {
        self.registry = registry
        self.faults = faults
        var projects: [String: Set<String>] = [:]
        for account in configuration.fcmServiceAccounts {
            if let project = account.projectID { projects[account.clientEmail, default: []].insert(project) }
        }
        self.projects = projects
        tokenAnswers = configuration.fcmTokenAnswers
    }

    /// Whether a path is FCM's (answered here, with FCM's errors) rather than APNs's.
    static func handles(path: String) -> Bool { path.hasPrefix("/v1/") }

    /// The project of a `messages:send` path, or nil.
    static func project(inPath path: String) -> String? {
        let path = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        guard path.hasPrefix(pathPrefix), path.hasSuffix(pathSuffix), path.count > pathPrefix.count + pathSuffix.count else { return nil }
        let project = path.dropFirst(pathPrefix.count).dropLast(pathSuffix.count)
        return project.contains("/") ? nil : String(project)
    }

    func judge(_ request: IncomingRequest, now: Double = Date().timeIntervalSince1970,
               random: () -> Double = { Double.random(in: 0..<1) }) -> FCMAnswer {
        guard let project = Self.project(inPath: request.path) else { return fail(.notFound(path: request.path)) }
        guard request.method == "POST" else { return fail(.methodNotAllowed) }
        guard let authorization = request.header("authorization") else { return fail(.missingCredentials) }
        guard authorization.lowercased().hasPrefix("bearer ") else { return fail(.invalidCredentials) }
        guard case .valid(let clientEmail) = registry.check(bearer: String(authorization.dropFirst("bearer ".count)), now: now) else {
            return fail(.invalidCredentials)
        }
        guard projects[clientEmail]?.contains(project) == true else {
            return fail(.permissionDenied(project: project), authenticated: true)
        }
        let accepted: FCMMessageValidator.Accepted
        switch validator.validate(request.body) {
        case .failure(let error): return fail(error, authenticated: true)
        case .success(let message): accepted = message
        }
        if let scripted = tokenAnswers.first(where: { accepted.token.hasPrefix($0.prefix) }), let error = FCMError.named(scripted.errorCode) {
            return fail(error, token: accepted.token, authenticated: true)
        }
        if let injected = faults.draw(random: random) {
            return fail(injected, token: accepted.token, authenticated: true)
        }
        if !accepted.validateOnly, let perMinute = faults.faults.deviceRatePerMinute,
           !deviceRate.admit(token: accepted.token, now: now, perMinute: perMinute) {
            return fail(.deviceQuotaExceeded, token: accepted.token, authenticated: true)
        }
        let name = accepted.validateOnly ? "projects/\(project)/messages/fake_message_id"
            : "projects/\(project)/messages/0:\(Int64(now * 1000))%\(String(UInt64.random(in: .min ... .max), radix: 16))"
        return FCMAnswer(status: 200, body: #"{"name":"\#(JSONText.escaped(name))"}"#, token: accepted.token,
                         validatedOnly: accepted.validateOnly, authenticated: true)
    }

    private func fail(_ error: FCMError, token: String? = nil, authenticated: Bool = false) -> FCMAnswer {
        FCMAnswer(status: error.code, body: error.json, error: error, token: token, authenticated: authenticated,
                  retryAfter: faults.retryAfter(status: error.code))
    }
}
