

/// What the collector emits: the valid messages of one kind gathered in one window.
public struct MessageBatch: Sendable {
    public var kind: MessageKind
    public var messages: [PushMessage]

    public init(kind: MessageKind, messages: [PushMessage]) {
        self.kind = kind
        self.messages = messages
    }
}
