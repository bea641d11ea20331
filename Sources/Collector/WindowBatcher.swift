import PushCore

/// The collection window as a state machine: per kind, a batch is emitted when it reaches its size
/// bound, or when its window (counted from its first message) ends. The caller owns the timers.
public struct WindowBatcher: Sendable {
    public let bounds: BatchBounds
    private var buffers: [MessageKind: [PushMessage]] = [:]
    private var generations: [MessageKind: Int] = [:]

    public init(bounds: BatchBounds) { self.bounds = bounds }

    public enum Effect: Equatable, Sendable {
        /// A new window began for this kind: call `deadline(kind:generation:)` when it ends.
        case startTimer(MessageKind, generation: Int)
    }

    /// Adds a message; returns a full batch if the bound was reached, and whether a timer must start.
    public mutating func add(_ message: PushMessage) -> (batch: MessageBatch?, effect: Effect?) {
        let kind = message.kind
        var effect: Effect?
        if buffers[kind, default: []].isEmpty {
            generations[kind, default: 0] += 1
            effect = .startTimer(kind, generation: generations[kind]!)
            buffers[kind, default: []].reserveCapacity(bounds.bound(for: kind))
        }
        buffers[kind, default: []].append(message)
        if buffers[kind]!.count >= bounds.bound(for: kind) {
            return (take(kind), effect)
        }
        return (nil, effect)
    }

    /// The window of `generation` ended: its batch, unless it already left because it was full.
    public mutating func deadline(kind: MessageKind, generation: Int) -> MessageBatch? {
        guard generations[kind] == generation, !(buffers[kind]?.isEmpty ?? true) else { return nil }
        return take(kind)
    }

    /// Everything buffered, for shutdown.
    public mutating func drain() -> [MessageBatch] {
        MessageKind.allCases.compactMap { kind in (buffers[kind]?.isEmpty ?? true) ? nil : take(kind) }
    }

    private mutating func take(_ kind: MessageKind) -> MessageBatch {
        let messages = buffers[kind] ?? []
        buffers[kind] = []
        generations[kind, default: 0] += 1
        return MessageBatch(kind: kind, messages: messages)
    }
}
