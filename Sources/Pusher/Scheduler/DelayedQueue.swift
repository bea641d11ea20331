/// Requests waiting for their retry time: a binary min-heap by due time, so a whole window answered 503
/// costs O(n log n) to schedule, not the O(n²) of a sorted array with linear inserts.
struct DelayedQueue<Element> {
    private var heap: [(due: UInt64, element: Element)] = []

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    /// The soonest due time, if any.
    var soonest: UInt64? { heap.first?.due }

    mutating func insert(_ element: Element, due: UInt64) {
        heap.append((due, element))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { break }
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
            if left < heap.count && heap[left].due < heap[smallest].due { smallest = left }
            if right < heap.count && heap[right].due < heap[smallest].due { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first.element
    }

    /// Everything still waiting, in no particular order (shutdown).
    mutating func removeAll() -> [Element] {
        defer { heap.removeAll() }
        return heap.map(\.element)
    }
}
