import PushCore

/// How long a queue element has waited: from its `enqueued_at` (UNIX ms, set by the producer) to `nowMillis`. nil
/// when it carries none (the field is optional) or is no JSON object. Read from an input list's consumer end
/// (`LINDEX <list> -1`), it is the age of the list's oldest message: `worker status` and the
/// `push_queue_oldest_age_seconds` gauge.
public enum QueuedAge {
    public static func millis(of element: [UInt8]?, nowMillis: Int64) -> Int64? {
        guard let element, let enqueued = (try? JSONParser.parse(element))?["enqueued_at"]?.exactInteger else { return nil }
        let (age, overflow) = nowMillis.subtractingReportingOverflow(enqueued)
        return overflow ? nil : max(0, age)
    }
}
