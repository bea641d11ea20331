/// A JSON document as the worker reads it from producers: strict RFC 8259, numbers kept as the literal
/// text the producer wrote (so a payload is sent exactly as written and no conversion can overflow),
/// object members in their original order.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The literal as written, already checked against the JSON number grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// The member named `key` of an object; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value at `path`, a key per level of nested objects (`["data", "preview"]`); nil when any is missing.
    public func value(at path: [String]) -> JSONValue? {
        var node = self
        for key in path {
            guard let child = node[key] else { return nil }
            node = child
        }
        return node
    }

    /// Every string in the value, at any depth (a string, or those in an array's items and an object's member
    /// values), in order: the texts a user could read from it (the word filter's).
    public func appendStrings(to texts: inout [String]) {
        switch self {
        case .string(let text): texts.append(text)
        case .array(let items): items.forEach { $0.appendStrings(to: &texts) }
        case .object(let members): members.forEach { $0.value.appendStrings(to: &texts) }
        default: break
        }
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var objectMembers: [JSONMember]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The number as a whole number, if it is one that an Int64 holds exactly (`10`, `10.0`, `1e3`);
    /// nil for anything else, never a trap.
    public var exactInteger: Int64? {
        guard case .number(let literal) = self else { return nil }
        if let whole = Int64(literal) { return whole }
        guard let double = Double(literal), double.isFinite, double.rounded() == double else { return nil }
        return Int64(exactly: double)
    }

    /// A short name of the value's type, for error reasons.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}
