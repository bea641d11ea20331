import PushCore
import RedisClient

/// How long a list's oldest message has waited: from its `enqueued_at` (UNIX ms, set by the producer) to `nowMillis`,
/// for `worker status` and the `push_queue_oldest_age_seconds` gauge. The field is read inside Redis
/// (`oldestCommand`): a list's oldest element can be anything a producer pushed, 200 MB included, and must never be
/// copied into a worker to read one number from it.
public enum QueuedAge {
    /// The command whose reply is the `enqueued_at` of `list`'s oldest element (its consumer end), or nil when the
    /// list is empty, the element is over `maxElementBytes`, is no JSON object or carries no number there.
    public static func oldestCommand(list: String, maxElementBytes: Int) -> [String] {
        ["EVAL", script, "1", list, String(max(1, maxElementBytes))]
    }

    /// The age in ms from `oldestCommand`'s reply (an integer), nil when it had none.
    public static func millis(enqueuedAt reply: RedisReply, nowMillis: Int64) -> Int64? {
        guard let enqueued = reply.integer else { return nil }
        let (age, overflow) = nowMillis.subtractingReportingOverflow(enqueued)
        return overflow ? nil : max(0, age)
    }

    /// cjson reads numbers as doubles, exact for a time in ms; Redis returns the number as an integer.
    static let script = """
    local e = redis.call('LINDEX', KEYS[1], -1)
    if not e or #e > tonumber(ARGV[1]) then return false end
    local ok, v = pcall(cjson.decode, e)
    if not ok or type(v) ~= 'table' then return false end
    local t = v['enqueued_at']
    if type(t) ~= 'number' or t ~= t or t < 0 or t > 9007199254740991 then return false end
    return t
    """
}
