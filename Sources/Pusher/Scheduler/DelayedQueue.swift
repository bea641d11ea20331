/// Requests waiting for their retry time: a binary min-heap by due time, so a whole window answered 503
/// costs O(n log n) to schedule, not the O(n²) of a sorted array with linear inserts. Elements due at the same
/// time come out in the order they went in: the tokens of a request that retry together stay together, in order,
/// and go again as one request.
struct DelayedQueue<Element> {
    private var heap: [(due: UInt64, order: UInt64, element: Element)] = []
    /// Insertion order, the tie-break between equal due times.
    private var inserted: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    /// The soonest due time, if any.
    var soonest: UInt64? { heap.first?.due }

    mutating func insert(_ element: Element, due: UInt64) {
        inserted &+= 1
        heap.append((due, inserted, element))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard sooner(child, than: parent) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the soonest element if it is due at `now`.
    mutating func popDue(now: UInt64) -> Element? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        if heap.isEmpty { return first.element }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && sooner(left, than: smallest) { smallest = left }
            if right < heap.count && sooner(right, than: smallest) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first.element
    }

    private func sooner(_ a: Int, than b: Int) -> Bool {
        heap[a].due < heap[b].due || (heap[a].due == heap[b].due && heap[a].order < heap[b].order)
    }

    /// Everything still waiting, in no particular order (shutdown).
    mutating func removeAll() -> [Element] {
        defer { heap.removeAll() }
        return heap.map(\.element)
    }
}
