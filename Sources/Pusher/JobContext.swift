import CCurl
import PushCore

/// A job as the transport thread holds it: the payload in memory libcurl can point at, and the request
/// header list, built once per job (and once more per JWT renewal) and shared by all its tokens.
/// Confined to the transport thread.
final class JobContext {
    let job: PushJob
    let payload: UnsafeMutableRawBufferPointer
    private(set) var headerList: UnsafeMutablePointer<curl_slist>?
    private(set) var headerGeneration = -1
    /// Lists replaced after a JWT renewal; requests still in flight may point at them until the job ends.
    private var retiredLists: [UnsafeMutablePointer<curl_slist>] = []

    init(job: PushJob) {
        self.job = job
        payload = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, job.payload.count), alignment: 1)
        payload.copyBytes(from: job.payload)
    }

    deinit {
        payload.deallocate()
        if let headerList { curl_slist_free_all(headerList) }
        retiredLists.forEach { curl_slist_free_all($0) }
    }

    /// The header list for the given provider token (nil for certificate auth).
    func headers(bearer: String?, generation: Int) -> UnsafeMutablePointer<curl_slist>? {
        if headerList != nil && generation == headerGeneration { return headerList }
        if let old = headerList { retiredLists.append(old) }
        var lines = [
            "apns-topic: \(job.headers.topic)",
            "apns-push-type: \(job.headers.pushType)",
            "apns-priority: \(job.headers.priority)",
            "apns-expiration: \(job.headers.expiration)",
            "content-type: application/json",
            "accept:",
        ]
        if let collapse = job.headers.collapseID { lines.append("apns-collapse-id: \(collapse)") }
        if let bearer { lines.append("authorization: bearer \(bearer)") }
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { list = curl_slist_append(list, line) }
        headerList = list
        headerGeneration = generation
        return list
    }
}
