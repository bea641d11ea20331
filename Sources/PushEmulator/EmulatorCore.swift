/// Everything the stream handlers of all connections share.
struct EmulatorCore: Sendable {
    let configuration: EmulatorConfiguration
    let judge: RequestJudge
    let stats: EmulatorStats
    let recorder: DeliveryRecorder
    let fcmTokenEndpoint: FCMTokenEndpoint
    let fcm: FCMCore
    /// The vendor sides (`EmulatedServices.swift`).
    let services: ServiceRouter
}
