import Foundation
import Logging
import ProviderKit
import PushCore

/// The credential: refusals pause the lane, answers end the pause, and readiness follows.
extension Scheduler {
    /// A request refused for the app's credential (or, `configuration`, for a value its configuration supplies)
    /// waits, its attempt not spent, while the app is paused.
    func refuseCredential(_ request: PendingRequest, reason: String, detail: String?, configuration: Bool = false) {
        let now = clock.uptimeNanoseconds
        let started = pause.refused(now: now)
        if started { credential.lanePaused(app: settings.app, metrics: metrics) }
        if credential.refuse(app: settings.app, reason: reason, service: service.name, readiness: readiness) {
            let probes = "nothing is dead-lettered, a probe request goes out every \(settings.credentialProbeFirstMillis) ms to \(settings.credentialProbeLongestMillis / 1000) s"
            logger?.error(configuration
                ? "\(service.name) refuses a value this app's configuration supplies (a channel, a template, a category): sending for this app is paused (\(probes)) until the configuration is fixed"
                : "\(service.name) rejects this app's credentials: replace the key, certificate or service account (or fix the clock); sending for this app is paused (\(probes)) and readiness is false until a request succeeds",
                          metadata: ["app": "\(settings.app)", "reason": "\(reason)", "detail": "\(detail ?? "")",
                                     "endpoint": "\(settings.baseURL)"])
        }
        retryCounts[reason, default: 0] += 1
        if let logger, logger.logLevel <= .debug {
            logger.debug("\(service.name) refused the credential: requests held", metadata: [
                "reason": "\(reason)", "app": "\(settings.app)", "pause_started": "\(started)",
                "next_probe_ms": "\(pause.resumeAt > now ? (pause.resumeAt - now) / 1_000_000 : 0)",
            ])
        }
        ready.append(request, lane: request.job.lane)
    }

    func notePauseAnswer(status: Int?) {
        guard pause.paused else { return }
        if pause.answered(status: status, now: clock.uptimeNanoseconds) {
            credential.laneResumed(app: settings.app, metrics: metrics)
            logger?.notice("\(service.name) authenticates this app's requests again: sending resumes", metadata: ["app": "\(settings.app)"])
        }
    }

    /// Readiness follows the credential: refused until a request with it is accepted.
    func noteAccepted(status: Int) {
        guard status == 200 else { return }
        if credential.accept(app: settings.app, readiness: readiness) {
            logger?.notice("\(service.name) accepts this app's credentials again", metadata: ["app": "\(settings.app)"])
        }
    }

    /// Says when the service's credential cannot be had (and readiness says why), and when it can again.
    func noteCredentialWait(_ authorization: Authorization) {
        if case .wait(let reason) = authorization {
            guard waitingForCredential != reason else { return }
            if waitingForCredential == nil {
                logger?.warning("\(service.name) credential unavailable: the app's requests wait (no attempt spent)", metadata: [
                    "app": "\(settings.app)", "reason": "\(reason)",
                ])
            }
            waitingForCredential = reason
            credential.waiting(app: settings.app, reason: reason, readiness: readiness)
        } else if waitingForCredential != nil {
            waitingForCredential = nil
            credential.waitOver(app: settings.app, readiness: readiness)
            logger?.notice("\(service.name) credential available again: sending resumes", metadata: ["app": "\(settings.app)"])
        }
    }

    /// `Word: detail` as the reason (a metric label, a log field) and its detail.
    static func split(_ reason: String) -> (String, String?) {
        guard let colon = reason.firstIndex(of: ":") else { return (reason, nil) }
        return (String(reason[..<colon]), reason[reason.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
}
