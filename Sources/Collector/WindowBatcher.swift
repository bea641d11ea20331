import PushCore

/// The collection window as a state machine: per kind and lane (chat and bulk never share a batch, so bulk
/// never holds a chat push back), a batch is emitted when it reaches its size bound, or when its window
/// (counted from the claim that brought its first message) ends. The caller owns the timers, and starts one
/// only for a window still open after a claim (`openedWindows`): under a backlog most windows fill up within
/// the claim that opened them, and a timer for each of those was a task that slept for nothing.
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
    /// One buffer and window generation per key, in arrays indexed by `slot(_:)`: a message is added per
    /// claimed element, and hashing the key for each cost more than the rest of `add`.
    private var buffers = [[PushMessage]](repeating: [], count: Self.slots)
    private var generations = [Int](repeating: 0, count: Self.slots)
    /// Per slot: its window opened since the last `openedWindows()`, so no timer has been asked for yet.
    private var unarmed = [Bool](repeating: false, count: Self.slots)
    private static let slots = MessageKind.allCases.count * Lane.allCases.count
    private static let keys: [Key] = {
        var keys = [Key](repeating: Key(kind: .private, lane: .chat), count: slots)
        for kind in MessageKind.allCases {
            for lane in Lane.allCases { keys[slot(Key(kind: kind, lane: lane))] = Key(kind: kind, lane: lane) }
        }
        return keys
    }()

    public init(bounds: BatchBounds) { self.bounds = bounds }

    private static func slot(_ key: Key) -> Int {
        let kind: Int
        switch key.kind {
        case .private: kind = 0
        case .group: kind = 1
        case .system: kind = 2
        }
        return kind * 2 + (key.lane == .bulk ? 1 : 0)
    }

    /// Adds a message; returns a full batch if the bound was reached.
    /// Consuming: the caller's message is moved into the window rather than copied (a retain per field).
    public mutating func add(_ message: consuming PushMessage) -> MessageBatch? {
        let key = Key(kind: message.kind, lane: Lane.of(pipelineSeq: message.seq))
        let slot = Self.slot(key)
        if buffers[slot].isEmpty {
            generations[slot] += 1
            unarmed[slot] = true
            buffers[slot].reserveCapacity(bounds.bound(for: key.kind))
        }
        buffers[slot].append(message)
        if buffers[slot].count >= bounds.bound(for: key.kind) {
            return take(key)
        }
        return nil
    }

    /// The windows opened since the last call and still open: for each, the caller starts a timer that calls
    /// `deadline(key:generation:)` when the window ends. A window that filled up in the meantime needs none.
    public mutating func openedWindows() -> [(key: Key, generation: Int)] {
        var opened: [(key: Key, generation: Int)] = []
        for slot in 0..<Self.slots where unarmed[slot] {
            unarmed[slot] = false
            if !buffers[slot].isEmpty { opened.append((Self.keys[slot], generations[slot])) }
        }
        return opened
    }

    /// The window of `generation` ended: its batch, unless it already left because it was full.
    public mutating func deadline(key: Key, generation: Int) -> MessageBatch? {
        let slot = Self.slot(key)
        guard generations[slot] == generation, !buffers[slot].isEmpty else { return nil }
        return take(key)
    }

    /// Everything buffered (shutdown, or a full pipeline), chat batches first.
    public mutating func drain() -> [MessageBatch] {
        Lane.allCases.flatMap { lane in
            MessageKind.allCases.compactMap { kind -> MessageBatch? in
                let key = Key(kind: kind, lane: lane)
                return buffers[Self.slot(key)].isEmpty ? nil : take(key)
            }
        }
    }

    private mutating func take(_ key: Key) -> MessageBatch {
        let slot = Self.slot(key)
        let messages = buffers[slot]
        buffers[slot] = []
        generations[slot] += 1
        unarmed[slot] = false
        return MessageBatch(kind: key.kind, messages: messages)
    }
}
