/// The Redis key names of SPEC section 3. They are public API: producers and tools depend on them.
public struct RedisKeys: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String = "push") { self.prefix = prefix }

    public var queue: String { "\(prefix):queue" }
    public var deadLetters: String { "\(prefix):dlq" }
    public var feedback: String { "\(prefix):feedback" }
    public var filtered: String { "\(prefix):filtered" }
    public var processingPattern: String { "\(prefix):processing:*" }

    public func processing(worker: String) -> String { "\(prefix):processing:\(worker)" }
    public func heartbeat(worker: String) -> String { "\(prefix):worker:\(worker)" }

    /// The worker id a processing-list key belongs to, or nil for a key of another shape.
    public func worker(fromProcessingKey key: String) -> String? {
        let head = "\(prefix):processing:"
        guard key.hasPrefix(head) else { return nil }
        return String(key.dropFirst(head.count))
    }
}
