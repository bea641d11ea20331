/// Items held until a due time, taken out in the order they fall due, and in the order they were put in when due
/// at the same time. A binary min-heap: with a constant latency each item is due no earlier than the one before it,
/// and an insert costs one comparison; jitter costs a few more (log n). Due times are in any one unit (nanoseconds
/// of the uptime clock in `DelayedAnswers`).
struct DueTimeQueue<Item> {
    private struct Entry {
        let due: UInt64
        /// Breaks ties: items due at the same time leave first in, first out.
        let sequence: UInt64
        let item: Item

        func isBefore(_ other: Entry) -> Bool {
            due != other.due ? due < other.due : sequence < other.sequence
        }
    }

    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    /// When the first item falls due, nil when empty.
    var firstDue: UInt64? { heap.first?.due }

    mutating func insert(_ item: Item, due: UInt64) {
        heap.append(Entry(due: due, sequence: nextSequence, item: item))
        nextSequence &+= 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isBefore(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The first item if it is due at `now`, taken out.
    mutating func removeFirst(dueBy now: UInt64) -> Item? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first.item }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            let right = left + 1
            let earlier = right < heap.count && heap[right].isBefore(heap[left]) ? right : left
            guard heap[earlier].isBefore(heap[parent]) else { break }
            heap.swapAt(parent, earlier)
            parent = earlier
        }
        return first.item
    }

    mutating func removeAll() { heap.removeAll() }
}
