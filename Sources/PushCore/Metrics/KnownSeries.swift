/// A provider's series known in advance, made at 0 before the first event so that `rate()` and alerts work from the
/// first scrape (a series that appears only with its first event hides that first increase from `rate()`).
public struct KnownSeries: Sendable {
    /// Its answers, in `push_provider_responses_total` (`status` 0: no answer).
    public var responses: [(status: Int, reason: String)]
    /// Its retry reasons, in `push_provider_retries_total`.
    public var retries: [String]
    /// Each of its apps' outcomes in `push_notifications_total`, beside `delivered` and `filtered` (every provider's).
    public var outcomes: [(outcome: String, reason: String)]

    public init(responses: [(status: Int, reason: String)] = [], retries: [String] = [], outcomes: [(outcome: String, reason: String)] = []) {
        self.responses = responses
        self.retries = retries
        self.outcomes = outcomes
    }
}
