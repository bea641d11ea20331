/// Lua scripts: each runs atomically in Redis, which is what makes claim, acknowledgement and
/// recovery safe against a worker killed at any instant.
enum QueueScripts {
    /// Moves up to ARGV[1] of the oldest queue elements to the processing list; returns them, oldest last.
    /// KEYS: queue, processing.
    static let claim = """
    local n = tonumber(ARGV[1])
    local items = redis.call('LRANGE', KEYS[1], -n, -1)
    local count = #items
    if count == 0 then return items end
    redis.call('LTRIM', KEYS[1], 0, -count - 1)
    -- oldest pushed first, so the processing list too keeps the oldest at its tail
    local i = count
    while i >= 1 do
      local j = math.max(1, i - 999)
      local chunk = {}
      for k = i, j, -1 do chunk[#chunk + 1] = items[k] end
      redis.call('LPUSH', KEYS[2], unpack(chunk))
      i = j - 1
    end
    return items
    """

    /// Acknowledges messages and writes their outcome records in one step. For each message: its raw
    /// element, a record count, then the records, each prefixed 'D' (dead letter), 'F' (feedback) or
    /// 'A' (filtered audit). Records are written only if the element was still claimed, so a retried
    /// acknowledgement (reply lost) or one for a message already recovered by another worker writes nothing twice.
    /// KEYS: processing, dlq, feedback, filtered. ARGV[1]: filtered cap. Returns how many were acknowledged.
    static let acknowledge = """
    local cap = tonumber(ARGV[1])
    local i = 2
    local acked = 0
    local audited = false
    while i <= #ARGV do
      local removed = redis.call('LREM', KEYS[1], -1, ARGV[i])
      local n = tonumber(ARGV[i + 1])
      i = i + 2
      if removed > 0 then
        acked = acked + 1
        for j = i, i + n - 1 do
          local record = ARGV[j]
          local kind = string.sub(record, 1, 1)
          local body = string.sub(record, 2)
          if kind == 'D' then redis.call('LPUSH', KEYS[2], body)
          elseif kind == 'F' then redis.call('LPUSH', KEYS[3], body)
          else redis.call('LPUSH', KEYS[4], body); audited = true end
        end
      end
      i = i + n
    end
    if audited then redis.call('LTRIM', KEYS[4], 0, cap - 1) end
    return acked
    """

    /// Returns a processing list to the queue's consuming end (RPUSH), oldest consumed first, unless
    /// the owner's heartbeat key exists (ARGV[1] == '1' asks for that check). KEYS: processing, queue, heartbeat.
    static let returnToQueue = """
    if ARGV[1] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
    local items = redis.call('LRANGE', KEYS[1], 0, -1)
    local count = #items
    local i = 1
    while i <= count do
      local j = math.min(count, i + 999)
      redis.call('RPUSH', KEYS[2], unpack(items, i, j))
      i = j + 1
    end
    redis.call('DEL', KEYS[1])
    return count
    """
}
