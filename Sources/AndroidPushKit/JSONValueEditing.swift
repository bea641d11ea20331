import PushCore

/// Small edits of a parsed JSON object, for building the vendor's request from the common payload: values stay
/// immutable (`JSONValue` is an enum), each edit makes the changed copy.
extension JSONValue {
    /// A copy with `key` set to `value` (replaced where present, appended otherwise); nil leaves it as it is.
    /// Only for objects: anything else comes back unchanged.
    public func setting(_ key: String, _ value: JSONValue?) -> JSONValue {
        guard let value, case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append(JSONMember(key: key, value: value))
        }
        return .object(members)
    }

    /// A copy without the members named in `keys` (an object; anything else unchanged).
    public func removing(_ keys: Set<String>) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { !keys.contains($0.key) })
    }
}
