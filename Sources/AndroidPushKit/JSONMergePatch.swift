import PushCore

/// RFC 7396 JSON Merge Patch: how the message's vendor object goes into the vendor's request "as it is, last".
/// An object in the patch merges into the object it meets, member by member, so `{"android":{"category":"WORK"}}`
/// changes the class and keeps the notification the common fields made; any other value replaces what was there;
/// `null` removes it (a producer can drop a field the worker sets, such as the ttl). The standard's rules, so a
/// producer can read what happens in one place rather than in this code.
public enum JSONMergePatch {
    /// Depth at most this far (a producer's payload is depth-limited already; this bounds the recursion anyway).
    public static let maxDepth = 32

    public static func apply(_ patch: JSONValue, to target: JSONValue, depth: Int = 0) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        guard depth < maxDepth else { return target }
        var members = target.objectMembers ?? []
        for change in changes {
            let index = members.firstIndex { $0.key == change.key }
            if change.value == .null {
                if let index { members.remove(at: index) }
            } else if let index {
                members[index].value = apply(change.value, to: members[index].value, depth: depth + 1)
            } else {
                members.append(JSONMember(key: change.key, value: apply(change.value, to: .null, depth: depth + 1)))
            }
        }
        return .object(members)
    }
}
