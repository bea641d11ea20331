/// The vendor sides behind one router (`EmulatedServices.swift` lists them): `answer` takes any request and answers
/// those on a side's paths, and each side's stats page (`GET /_emulator/<name>/stats`); nil for the rest (APNs's and
/// FCM's).
struct ServiceRouter: Sendable {
    let services: [any EmulatedService]
    /// `/_emulator/<name>/stats` of each side, in `services`' order.
    private let statsPaths: [String]
    private let statsPrefixes: [String]

    init(configuration: EmulatorConfiguration) throws {
        let types = EmulatedServices.registered
        services = try types.map { try $0.init(configuration: configuration) }
        statsPrefixes = types.map { "/_emulator/\($0.name)/" }
        statsPaths = statsPrefixes.map { $0 + "stats" }
    }

    /// Whether a path is a side's (its streams are not FCM's, though a vendor's path may look like FCM's).
    func handles(path: String) -> Bool {
        services.contains { $0.handles(path: path) } || statsPrefixes.contains { path.hasPrefix($0) }
    }

    func answer(_ request: IncomingRequest) -> VendorResponse? {
        if request.method == "GET", let index = statsPaths.firstIndex(of: request.path) {
            return VendorResponse(status: 200, headers: [("content-type", "application/json")], body: services[index].stats.json)
        }
        for service in services {
            guard var response = service.answer(request) else { continue }
            // Sends only: an auth endpoint answers at once.
            if !service.isAuthEndpoint(path: request.path) {
                response.delayMillis = min(max(0, service.faults.latencyMillis), DelayedAnswers.longestDelayMillis)
            }
            return response
        }
        return nil
    }

    /// The side of type `Service` (what `PushEmulator`'s accessors in the sides' folders hand out).
    func service<Service: EmulatedService>(_ type: Service.Type) -> Service {
        guard let found = services.lazy.compactMap({ $0 as? Service }).first else {
            fatalError("\(Service.self) is not registered in EmulatedServices.swift")
        }
        return found
    }
}
