/// Request id -> the connection and stream it runs on, for `cancel`. Callers' ids are nearly always small and
/// dense (the scheduler uses the slots of its in-flight table), so those live in an array indexed by id;
/// any other id falls back to a dictionary. Three hashed operations per request (insert, lookup, removal) were
/// the dictionary's cost before.
struct RequestLocations {
    struct Location {
        let connection: Connection
        let streamID: Int32
    }

    /// Ids below this use the array: bounded, so a caller's huge id cannot make it grow without limit.
    static let denseLimit: UInt64 = 1 << 20
    private var dense: [Location?] = []
    private var sparse: [UInt64: Location] = [:]

    subscript(id: UInt64) -> Location? {
        if id < Self.denseLimit {
            let index = Int(id)
            return index < dense.count ? dense[index] : nil
        }
        return sparse[id]
    }

    mutating func set(_ location: Location, for id: UInt64) {
        guard id < Self.denseLimit else {
            sparse[id] = location
            return
        }
        let index = Int(id)
        if index >= dense.count { dense.append(contentsOf: repeatElement(nil, count: index + 1 - dense.count)) }
        dense[index] = location
    }

    @discardableResult
    mutating func remove(_ id: UInt64) -> Location? {
        guard id < Self.denseLimit else { return sparse.removeValue(forKey: id) }
        let index = Int(id)
        guard index < dense.count, let location = dense[index] else { return nil }
        dense[index] = nil
        return location
    }

    mutating func removeAll() {
        dense.removeAll()
        sparse.removeAll()
    }
}
