/// One vendor side of the emulator (a push service it stands in for): the paths it answers, its answer to a request
/// on them, its counters and the faults it runs with. Built once per emulator from the configuration (its settings);
/// the router (`ServiceRouter`) asks every side registered in `EmulatedServices.swift`, in turn. A side lives in its
/// own folder, `Sources/PushEmulator/<Vendor>/`, with its settings, flags and what a test sees of it.
protocol EmulatedService: Sendable {
    /// The vendor's name in texts; lower-cased, the side's name in URLs (`/_emulator/<name>/stats`).
    static var vendor: String { get }
    /// What the side stands in for, in `push-emulator`'s overview (the vendor's name and its service's).
    static var title: String { get }

    init(configuration: EmulatorConfiguration) throws

    /// Whether `path` is the side's: a stream on it is not FCM's, though a vendor's path may look like one.
    func handles(path: String) -> Bool

    /// Whether `path` is the side's auth endpoint, which answers at once: the latency fault is its sends'.
    func isAuthEndpoint(path: String) -> Bool

    /// The answer to a request on one of the side's paths (its checks, counters and receipts); nil for other paths.
    func answer(_ request: IncomingRequest) -> VendorResponse?

    /// What `GET /_emulator/<name>/stats` serves.
    var stats: VendorStats { get }

    /// The faults in force, changeable while running (the router delays the side's sends by their latency).
    var faults: VendorFaults { get }
}

extension EmulatedService {
    static var name: String { vendor.lowercased() }

    func isAuthEndpoint(path: String) -> Bool { false }
}
