/// Which node serves which slots, as one node's `CLUSTER SLOTS` answer tells it: every range with its
/// primary and replicas, each as `host:port`.
struct ClusterTopology: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        var slots: ClosedRange<Int>
        var primary: String
        var replicas: [String]
    }

    var ranges: [Range] = []

    /// The primary that serves `slot`, nil when no range covers it.
    func primary(of slot: Int) -> String? {
        ranges.first { $0.slots.contains(slot) }?.primary
    }

    /// Every node the topology names, primaries first: the nodes to ask next time.
    var nodes: [String] {
        var all: [String] = []
        for node in ranges.map(\.primary) + ranges.flatMap(\.replicas) where !all.contains(node) { all.append(node) }
        return all
    }

    /// Reads a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, ...], [replica host, port, ...], ...], ...]`.
    /// A node that does not know its own address answers "" (or "?") as its host: that is `askedHost`.
    init?(clusterSlots reply: RedisReply, askedHost: String) {
        guard case .array(let entries) = reply else { return nil }
        for entry in entries {
            guard let fields = entry.array, fields.count >= 3, let start = fields[0].integer, let end = fields[1].integer,
                  start <= end, let primary = Self.address(fields[2], askedHost: askedHost)
            else { return nil }
            let replicas = fields.dropFirst(3).compactMap { Self.address($0, askedHost: askedHost) }
            ranges.append(Range(slots: Int(start)...Int(end), primary: primary, replicas: replicas))
        }
    }

    init(ranges: [Range]) { self.ranges = ranges }

    private static func address(_ node: RedisReply, askedHost: String) -> String? {
        guard let fields = node.array, fields.count >= 2, let port = fields[1].integer, port > 0 else { return nil }
        var host = fields[0].string ?? ""
        if host.isEmpty || host == "?" { host = askedHost }
        return "\(host):\(port)"
    }
}
