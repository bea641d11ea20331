import APNsProvider
import Logging
import ProviderKit
import Pusher
import PushCore

extension Scheduler {
    /// An APNs lane, as tests of the scheduler and the emulator start one: a provider token (JWT), or none with a client certificate (which `settings` names).
    public convenience init(settings: TransportSettings, provider: ProviderToken?, readiness: Readiness? = nil, logger: Logger? = nil,
                            credential: CredentialState = CredentialState(), lease: OwnershipLease = .unfenced(),
                            sink: @escaping @Sendable ([Resolution]) -> Void) throws {
        try self.init(settings: settings, service: APNsService(provider: provider), readiness: readiness, logger: logger,
                      credential: credential, lease: lease, sink: sink)
    }
}
