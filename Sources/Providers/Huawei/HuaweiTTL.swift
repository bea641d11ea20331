/// A message's `expiration` (absolute Unix seconds) as Huawei's ttl: the seconds left when the request is made,
/// not when the message was: time spent in the window, the queues and retries is not promised to the device again.
///
/// - nil (the producer gave none): no ttl is sent, so Huawei keeps its default (a day).
/// - 0 ("deliver now or drop"), an expiration this very second, and (defensively: the scheduler dead-letters an
///   expired message before it builds a request) one already past: the shortest ttl, `shortestSeconds`.
/// - later: the seconds left, at most 15 days (`maxSeconds`, Huawei's maximum; longer is refused with 80100001).
///
/// Huawei documents no minimum. The shortest is 1 second rather than 0: whether Push Kit reads a ttl of 0 as "do
/// not cache" or as "unset, the default day" is unverified (an API that reads 0 as unset would keep a message
/// meant to be dropped for a day); 1 second means "now or never" on either reading.
enum HuaweiTTL {
    static let maxSeconds: Int64 = 1_296_000
    static let shortestSeconds: Int64 = 1

    static func seconds(expiration: Int64?, nowSeconds: Int64) -> Int64? {
        guard let expiration else { return nil }
        guard expiration != 0 else { return shortestSeconds }
        let (left, overflow) = expiration.subtractingReportingOverflow(nowSeconds)
        // Overflow: the two are at opposite ends of Int64; an expiration far ahead of a clock far behind is the max.
        if overflow { return expiration > nowSeconds ? maxSeconds : shortestSeconds }
        return min(max(left, shortestSeconds), maxSeconds)
    }
}
