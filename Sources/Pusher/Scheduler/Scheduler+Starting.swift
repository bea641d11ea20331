import Logging
import ProviderKit
import PushCore

/// Starting requests: the hold and the credential pause decide how many may start, the ownership fence
/// whether each may, expiry whether it is still worth sending.
extension Scheduler {
    /// Starts ready requests while the driver has room; returns the room left.
    func startRequests() -> Int {
        passAuthorization = nil
        // The service (a whole project after a 429) is held back until the time it named.
        if credential.holdUntil(now: clock.uptimeNanoseconds) != nil { return driver.room(limit: activeLimit - active) }
        if let until = rateWaitUntil {
            guard clock.uptimeNanoseconds >= until else { return driver.room(limit: activeLimit - active) }
            rateWaitUntil = nil
        }
        var allowance = pause.allowance(now: pause.paused ? clock.uptimeNanoseconds : 0, active: active)
        var room = driver.room(limit: activeLimit - active)
        while room > 0 && allowance > 0,
              let request = ready.popNext(bulkBelowFloor: bulkBelowFloor, bulkAllowed: bulkAllowed) {
            guard start(request) else {
                if pause.paused { allowance = 0 }  // the credential cannot sign: held, and the pause decides
                if waitingForCredential != nil { break }  // no credential yet: the rest wait with it
                if rateWaitUntil != nil { break }  // the app's rate is spent: the rest wait for it
                continue
            }
            room -= 1
            if pause.paused {
                pause.probeStarted()
                allowance -= 1
            }
        }
        return room
    }

    /// Copies the lease when it changed; held requests then get checked again.
    func refreshLease() {
        let revision = lease.revision.load(ordering: .acquiring)
        guard revision != leaseRevision else { return }
        leaseRevision = revision
        (leaseValidUntil, revoked) = lease.snapshot()
        if !held.isEmpty {
            ready.append(contentsOf: held.map { ($0, $0.job.lane) })
            held.removeAll(keepingCapacity: true)
        }
    }

    enum Fence { case send, hold, drop }

    /// Ownership fencing: a request is held while the lease of any of its messages' shards has lapsed, and
    /// dropped when every message it serves was taken over by another worker.
    func fence(_ request: PendingRequest, now: UInt64) -> Fence {
        let context = request.job  // the job read in place, not copied
        let primary = context.job.firstOwner(ofToken: request.token)
        if context.job.extraOwners.isEmpty {
            if now >= leaseValidUntil[min(PipelineSeq.shard(of: primary), leaseValidUntil.count - 1)] { return .hold }
            return revoked.isEmpty || !revoked.contains(primary) ? .send : .drop
        }
        var live = false
        for seq in context.job.owners(ofToken: request.token) {
            if now >= leaseValidUntil[min(PipelineSeq.shard(of: seq), leaseValidUntil.count - 1)] { return .hold }
            if !revoked.contains(seq) { live = true }
        }
        return live ? .send : .drop
    }

    /// Whether a request may go now: the ownership fence and its expiry. False if it was resolved or held instead.
    func admit(_ request: PendingRequest, now: UInt64) -> Bool {
        switch fence(request, now: now) {
        case .send:
            break
        case .hold:
            held.append(request)
            return false
        case .drop:
            resolve(request, .claimLost)
            return false
        }
        // The wall clock only for the few requests that carry an expiration.
        if request.job.job.headers.expiresAtATime,
           request.job.job.headers.isExpired(nowSeconds: clock.wallSeconds) {
            resolve(request, .failed(reason: "Expired", status: nil, attempts: request.attempt - 1))
            return false
        }
        return true
    }

    /// Hands one request to the driver; false if it was resolved or held instead. For a service that takes a
    /// list, the job's next ready tokens join it (`collectBatch`).
    func start(_ request: PendingRequest) -> Bool {
        let now = clock.uptimeNanoseconds
        if let until = credential.holdUntil(request.job.messageClass, now: now) {
            // Its class is held (a quota spent for it): it waits for the hold's end, no attempt spent.
            delayed.insert(request, due: until)
            return false
        }
        guard admit(request, now: now) else { return false }
        var bearer: String?
        var generation = 0
        let authorization: Authorization
        if let passAuthorization {
            authorization = passAuthorization
        } else {
            authorization = service.authorization()
            passAuthorization = authorization
            noteCredentialWait(authorization)
        }
        switch authorization {
        case .none:
            break
        case .bearer(let token, let tokenGeneration):
            bearer = token
            generation = tokenGeneration
        case .wait:
            // No credential can be had just now: the request waits at the front, no attempt spent.
            ready.prepend(request, lane: request.job.lane)
            return false
        case .refused(let reason):
            // A credential that cannot be had is the app's problem like a refused one: pause, dead-letter nothing.
            if pause.paused { pause.probeStarted() }
            let (word, detail) = Self.split(reason)
            refuseCredential(request, reason: word, detail: detail)
            return false
        }
        var batch = batchLimit > 1 ? collectBatch(after: request, now: now) : []
        if rateLimited {
            switch settings.rateLimit.grant(tokensWanted: 1 + batch.count, now: now) {
            case .go(let tokens):
                // What the rate does not allow now waits at the front, in its order.
                while batch.count + 1 > max(1, tokens), let last = batch.popLast() { ready.prepend(last, lane: last.job.lane) }
            case .wait(let nanos):
                while let last = batch.popLast() { ready.prepend(last, lane: last.job.lane) }
                ready.prepend(request, lane: request.job.lane)
                rateWaitUntil = now &+ max(nanos, 1)
                return false
            }
        }
        let tokens = batch.isEmpty ? RequestTokens(request.token) : RequestTokens(request.token, rest: batch.map(\.token))
        let id: Int
        if let free = freeIDs.popLast() {
            id = free
        } else {
            id = inFlight.count
            inFlight.append(nil)
        }
        inFlight[id] = InFlight(request: request, batch: batch, tokens: tokens, generation: generation, startedAt: now)
        active += 1
        if request.job.lane == .bulk { bulkActive += 1 }
        if let answer = service.prepare(for: request.job, tokens: tokens) {
            // The step before it failed: nothing is sent, the answer settles its tokens.
            settleUnsent(id, answer)
            return true
        }
        var started = DriverRequest(id: id, job: request.job, tokens: tokens, bearer: bearer, generation: generation, now: now)
        if let lifetime = headerLifetimeMillis { started.headerEpoch = clock.wallMillis / lifetime }
        driver.start(started)
        return true
    }

    /// The tokens that join `first` in one request: the ready ones of the same job that come next in its lane,
    /// up to the service's `batchLimit`, each through the fence and expiry on its own. A job's tokens enter the
    /// ready queue together, and its retries come due together, so they are next to each other there.
    func collectBatch(after first: PendingRequest, now: UInt64) -> [PendingRequest] {
        var batch: [PendingRequest] = []
        let job = first.job
        while batch.count + 1 < batchLimit, let next = ready.popFirst(lane: job.lane, where: { $0.job === job }) {
            if admit(next, now: now) { batch.append(next) }
        }
        return batch
    }
}
