import PushCore

/// A vendor's value for each message class (a category, a channel, an importance): what the app's configuration
/// gives for chat (`private` and `group` messages), `kind: system` messages and the bulk list's. "" sends none (the
/// vendor's default class).
public struct ClassValues<Value: Sendable & Equatable>: Sendable, Equatable {
    public var chat: Value
    public var system: Value
    public var bulk: Value

    public init(chat: Value, system: Value, bulk: Value) {
        self.chat = chat
        self.system = system
        self.bulk = bulk
    }

    public subscript(_ messageClass: MessageClass) -> Value {
        switch messageClass {
        case .chat: return chat
        case .system: return system
        case .bulk: return bulk
        }
    }
}
