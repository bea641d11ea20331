import PushCore

/// The transport's requests ready to start, one FIFO per lane (docs/operations.md): a chat request never waits
/// behind bulk ones, yet bulk is never starved: while it has fewer than its floor of requests active, its
/// next one goes first.
struct ReadyQueues<Element> {
    private var chat = FIFO<Element>()
    private var bulk = FIFO<Element>()

    var isEmpty: Bool { chat.isEmpty && bulk.isEmpty }
    var count: Int { chat.count + bulk.count }
    var hasBulk: Bool { !bulk.isEmpty }

    /// Whether a request may start now: a chat one, or a bulk one that its limit lets out.
    func hasStartable(bulkAllowed: Bool) -> Bool { !chat.isEmpty || (bulkAllowed && !bulk.isEmpty) }

    mutating func append(_ element: Element, lane: Lane) {
        if lane == .bulk { bulk.append(element) } else { chat.append(element) }
    }

    /// Puts a request back at the head of its lane (it could not start: it keeps its turn).
    mutating func prepend(_ element: Element, lane: Lane) {
        if lane == .bulk { bulk.prepend(element) } else { chat.prepend(element) }
    }

    mutating func append(contentsOf elements: [(Element, Lane)]) {
        for (element, lane) in elements { append(element, lane: lane) }
    }

    /// The head of `lane`'s queue if `matches` says so (the next token of a batch's job).
    mutating func popFirst(lane: Lane, where matches: (Element) -> Bool) -> Element? {
        lane == .bulk ? bulk.popFirst(where: matches) : chat.popFirst(where: matches)
    }

    /// The next request to start: chat first, unless bulk is below its floor of active requests; bulk only
    /// while `bulkAllowed` (its own limit, which keeps the servers' queues short for chat).
    mutating func popNext(bulkBelowFloor: Bool, bulkAllowed: Bool) -> Element? {
        if bulkBelowFloor, let next = bulk.popFirst() { return next }
        if let next = chat.popFirst() { return next }
        return bulkAllowed ? bulk.popFirst() : nil
    }
}

/// A queue with amortized O(1) removal at the front: an array and the index of its head.
struct FIFO<Element> {
    /// Slots before `head` are nil: an element is moved out when popped, not copied (a copy retained it, and the
    /// array released it later, at compaction).
    private var items: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head >= items.count }
    var count: Int { items.count - head }

    mutating func append(_ element: Element) { items.append(element) }

    /// At the head again: into the slot the last pop freed, or (rarely) shifting the rest.
    mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            items[head] = element
        } else {
            items.insert(element, at: 0)
        }
    }

    /// The head, if `matches` says so.
    mutating func popFirst(where matches: (Element) -> Bool) -> Element? {
        guard head < items.count, let first = items[head], matches(first) else { return nil }
        return popFirst()
    }

    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        var element: Element?
        swap(&element, &items[head])
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }
}
