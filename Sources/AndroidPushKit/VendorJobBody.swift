import ProviderKit
import PushCore

/// A job's request body up to its tokens, made on the job's first request from its payload (read once, as the
/// common Android shape) and kept in the job's `serviceCache` for its later requests; made again only when the ttl
/// (the seconds left until the message expires) has changed since, so a retry a minute later promises the device
/// no more time than is left.
public enum VendorJobBody {
    /// The body for `job` at `ttl`, made by `make` (from the payload and the ttl) when the cache has none for it.
    public static func body<Body>(for job: JobContext, ttl: Int64?, vendorKey: String,
                                  make: (_ payload: AndroidPayload, _ ttl: Int64?) -> Body) -> Body {
        if let cached = job.serviceCache as? Cached<Body> {
            if cached.ttl != ttl {
                cached.body = make(cached.payload, ttl)
                cached.ttl = ttl
            }
            return cached.body
        }
        let payload = AndroidPayload(bytes: job.job.payload, vendorKey: vendorKey)
        let made = Cached(payload: payload, ttl: ttl, body: make(payload, ttl))
        job.serviceCache = made
        return made.body
    }

    /// What the job's cache holds (one lane's thread reads and writes it).
    final class Cached<Body> {
        let payload: AndroidPayload
        var ttl: Int64?
        var body: Body

        init(payload: AndroidPayload, ttl: Int64?, body: Body) {
            self.payload = payload
            self.ttl = ttl
            self.body = body
        }
    }
}
