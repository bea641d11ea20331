/// A message's `expiration` (absolute Unix seconds) as a vendor's ttl: the seconds left when the request is made,
/// not when the message was: time spent in the window, the queues and retries is not promised to the device again.
///
/// - nil (the producer gave none): no ttl is sent, so the vendor keeps its default.
/// - 0 ("deliver now or drop"), an expiration this very second, and (defensively: the scheduler dead-letters an
///   expired message before it builds a request) one already past: the shortest ttl, `shortestSeconds`.
/// - later: the seconds left, at most the vendor's maximum (`maxSeconds`; a longer one is refused).
///
/// The shortest is 1 second rather than 0 unless a vendor documents 0: whether an API reads a ttl of 0 as "do not
/// cache" or as "unset, the default" is mostly unverified (one that reads 0 as unset would keep a message meant to
/// be dropped for its default), and 1 second means "now or never" on either reading.
public struct VendorTTL: Sendable, Equatable {
    public let maxSeconds: Int64
    public let shortestSeconds: Int64

    public init(maxSeconds: Int64, shortestSeconds: Int64 = 1) {
        self.maxSeconds = maxSeconds
        self.shortestSeconds = shortestSeconds
    }

    public func seconds(expiration: Int64?, nowSeconds: Int64) -> Int64? {
        guard let expiration else { return nil }
        guard expiration != 0 else { return shortestSeconds }
        let (left, overflow) = expiration.subtractingReportingOverflow(nowSeconds)
        // Overflow: the two are at the far ends of Int64; an expiration far ahead of a clock far behind is the max.
        if overflow { return expiration > nowSeconds ? maxSeconds : shortestSeconds }
        return min(max(left, shortestSeconds), maxSeconds)
    }
}
