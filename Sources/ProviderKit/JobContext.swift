import PushCore

/// A job as the transport thread holds it: the payload in memory a C client can point at, and the request
/// headers, built once per job (and once more per credential renewal) in the driver's own form and shared by all
/// its tokens. Confined to the transport thread.
public final class JobContext {
    public let job: PushJob
    /// The list its messages came from (a job never mixes lanes: windows are per lane).
    public let lane: Lane
    /// The class the vendors see (chat, system, bulk): from the lane and the messages' kind, the same for every
    /// message of the job (windows are per kind and lane).
    public let messageClass: MessageClass
    /// The payload at an address that stays put while libcurl reads it; made on first use, so the nghttp2
    /// driver (which copies from the job's own bytes) never pays for the copy.
    public var payload: UnsafeMutableRawBufferPointer {
        if let stablePayload { return stablePayload }
        let made = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, job.payload.count), alignment: 1)
        made.copyBytes(from: job.payload)
        stablePayload = made
        return made
    }
    private var stablePayload: UnsafeMutableRawBufferPointer?
    /// The driver's prebuilt headers for `headersGeneration` (a curl_slist owner, an HTTP/2 header block).
    /// Requests in flight keep their own reference, so a renewal never frees headers still in use.
    public var driverHeaders: AnyObject?
    public var headersGeneration = -1
    /// The time slice the headers were built in (`PushService.headerLifetimeMillis`; 0 for services without one).
    public var headersEpoch: Int64 = 0
    /// What a service builds once per job and reuses for each token (a request body up to the token).
    public var serviceCache: AnyObject?

    public init(job: PushJob) {
        self.job = job
        lane = Lane.of(pipelineSeq: job.firstSource)
        messageClass = MessageClass(lane: lane, kind: job.kind)
    }

    deinit { stablePayload?.deallocate() }

    /// The driver's headers for this generation of the credential and this time slice, made by `build` when
    /// missing.
    @inlinable
    public func headers<T: AnyObject>(generation: Int, epoch: Int64 = 0, build: () -> T) -> T {
        if headersGeneration == generation, headersEpoch == epoch, let cached = driverHeaders as? T { return cached }
        let made = build()
        driverHeaders = made
        headersGeneration = generation
        headersEpoch = epoch
        return made
    }
}
