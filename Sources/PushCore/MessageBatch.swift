

/// What the collector emits: the valid messages of one kind gathered in one window.
public struct MessageBatch: Sendable {
    public var kind: MessageKind
    public var messages: [PushMessage]

    public init(kind: MessageKind, messages: [PushMessage]) {
        self.kind = kind
        self.messages = messages
    }

    /// The messages, handed over with the batch: with the batch gone, the array is the caller's alone and can
    /// be taken apart without copying (`batch.messages` would share it with the batch still alive).
    public consuming func takeMessages() -> [PushMessage] { messages }
}
