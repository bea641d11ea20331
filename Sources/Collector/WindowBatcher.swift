import PushCore

/// The collection window as a state machine: per kind and lane (chat and bulk never share a batch, so bulk
/// never holds a chat push back), a batch is emitted when it reaches its size bound, or when its window
/// (counted from its first message) ends. The caller owns the timers.
public struct WindowBatcher: Sendable {
    /// What a window gathers: one kind of message from one lane.
    public struct Key: Hashable, Sendable {
        public var kind: MessageKind
        public var lane: Lane
        public init(kind: MessageKind, lane: Lane) {
            self.kind = kind
            self.lane = lane
        }
    }

    public let bounds: BatchBounds
    private var buffers: [Key: [PushMessage]] = [:]
    private var generations: [Key: Int] = [:]

    public init(bounds: BatchBounds) { self.bounds = bounds }

    public enum Effect: Equatable, Sendable {
        /// A new window began for this key: call `deadline(key:generation:)` when it ends.
        case startTimer(Key, generation: Int)
    }

    /// Adds a message; returns a full batch if the bound was reached, and whether a timer must start.
    public mutating func add(_ message: PushMessage) -> (batch: MessageBatch?, effect: Effect?) {
        let key = Key(kind: message.kind, lane: Lane.of(pipelineSeq: message.seq))
        var effect: Effect?
        if buffers[key, default: []].isEmpty {
            generations[key, default: 0] += 1
            effect = .startTimer(key, generation: generations[key]!)
            buffers[key, default: []].reserveCapacity(bounds.bound(for: key.kind))
        }
        buffers[key, default: []].append(message)
        if buffers[key]!.count >= bounds.bound(for: key.kind) {
            return (take(key), effect)
        }
        return (nil, effect)
    }

    /// The window of `generation` ended: its batch, unless it already left because it was full.
    public mutating func deadline(key: Key, generation: Int) -> MessageBatch? {
        guard generations[key] == generation, !(buffers[key]?.isEmpty ?? true) else { return nil }
        return take(key)
    }

    /// Everything buffered (shutdown, or a full pipeline), chat batches first.
    public mutating func drain() -> [MessageBatch] {
        Lane.allCases.flatMap { lane in
            MessageKind.allCases.compactMap { kind -> MessageBatch? in
                let key = Key(kind: kind, lane: lane)
                return (buffers[key]?.isEmpty ?? true) ? nil : take(key)
            }
        }
    }

    private mutating func take(_ key: Key) -> MessageBatch {
        let messages = buffers[key] ?? []
        buffers[key] = []
        generations[key, default: 0] += 1
        return MessageBatch(kind: key.kind, messages: messages)
    }
}
