import PushCore

/// The tokens one request carries, as indices into its job's tokens: one for a service with a request per device,
/// up to the service's `batchLimit` for a service that takes a list (the China vendors take 1,000).
/// A single token keeps no array, so the one-token services pay nothing for batches.
public struct RequestTokens {
    /// The first token (the only one unless the request is a batch).
    public let first: Int
    /// The batch's other tokens, in the order the request lists them; empty for one token.
    public let rest: [Int]

    @inlinable
    public init(_ first: Int, rest: [Int] = []) {
        self.first = first
        self.rest = rest
    }

    @inlinable
    public var count: Int { 1 + rest.count }

    /// The token at `position` in the request's order (0 is `first`).
    @inlinable
    public func token(at position: Int) -> Int { position == 0 ? first : rest[position - 1] }

    /// Calls `body` with each token's position in the request and its index in the job, in the request's order.
    @inlinable
    public func forEach(_ body: (_ position: Int, _ token: Int) -> Void) {
        body(0, first)
        for (offset, token) in rest.enumerated() { body(offset + 1, token) }
    }

    /// The request's tokens themselves, in its order, as `job` lists them (a list body names them).
    public func names(in job: PushJob) -> [String] {
        var names: [String] = []
        names.reserveCapacity(count)
        forEach { _, index in names.append(job.tokens[index]) }
        return names
    }
}
