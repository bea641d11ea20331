/// The Lua scripts of the queue protocol. Each runs atomically in Redis, which is what makes claim,
/// acknowledgement and recovery safe against a worker killed at any instant. Each touches the keys of one
/// prefix only, so with hash-tagged prefixes every script is single-slot (Redis Cluster). None of them does
/// work that grows with the length of the queue or of a processing hash: each is O(what it moves).
enum QueueScripts {
    /// Lua helpers for the death counts in `deliveries`, pasted into the scripts that use them. The hash holds
    /// two kinds of field. A claimed entry's count is under `<processing key>#<sequence>`: one integer, the
    /// deaths of its holders so far. Copies returned to the lists wait under the SHA-1 of their bytes, as a
    /// tally `deaths:copies,...` (`2:1,1:3`: one copy with two deaths, three with one), so that many copies
    /// of the same bytes cost a few numbers, not one each. A bare integer (earlier versions: one count per
    /// digest) reads as one copy with that many deaths.
    static let deathTally = """
    local function parseTally(value)
      local tally = {}
      if value then
        for part in string.gmatch(value, '[^,]+') do
          local deaths, copies = string.match(part, '^(%d+):(%d+)$')
          if not deaths then deaths, copies = string.match(part, '^(%d+)$'), '1' end
          deaths, copies = tonumber(deaths), tonumber(copies)
          if deaths and copies and deaths > 0 and copies > 0 then tally[deaths] = (tally[deaths] or 0) + copies end
        end
      end
      return tally
    end
    local function highestCount(tally)
      local highest = 0
      for deaths in pairs(tally) do if deaths > highest then highest = deaths end end
      return highest
    end
    local function takeCount(tally, deaths)
      local left = tally[deaths] - 1
      if left > 0 then tally[deaths] = left else tally[deaths] = nil end
    end
    local function formatTally(tally)
      local counts = {}
      for deaths in pairs(tally) do counts[#counts + 1] = deaths end
      table.sort(counts, function(a, b) return a > b end)
      local parts = {}
      for k = 1, #counts do parts[k] = string.format('%d:%d', counts[k], tally[counts[k]]) end
      return table.concat(parts, ',')
    end
    """

    /// Lua helper for the recovery script: the `raw` member of a dead letter of an element that was not
    /// parsed, built as `DeadLetterEntry.record(element:)` builds it (docs/redis-keys.md, docs/security.md), so the tools
    /// read it like any other: `"raw"` is the element as text, each ill-formed UTF-8 sequence replaced with
    /// U+FFFD (one per maximal subpart, as Swift's `String(decoding:as:)` does), and `"raw_base64"` follows
    /// with every byte when the text could not hold them. Unicode's table 3-7 decides what is well-formed.
    /// A raw literal: the Lua byte escapes (`\128`) must reach Lua as they are.
    static let rawMembers = #"""
    local function utf8Text(s)
      local first = string.find(s, '[\128-\255]')
      if not first then return s, true end
      local out = {}
      local runStart = 1
      local valid = true
      local i = first
      local n = #s
      while i <= n do
        local b = string.byte(s, i)
        if b < 128 then
          i = string.find(s, '[\128-\255]', i)
          if not i then break end
          b = string.byte(s, i)
        end
        local need, lo, hi = 0, 128, 191
        if b >= 194 and b <= 223 then need = 1
        elseif b == 224 then need, lo = 2, 160
        elseif (b >= 225 and b <= 236) or b == 238 or b == 239 then need = 2
        elseif b == 237 then need, hi = 2, 159
        elseif b == 240 then need, lo = 3, 144
        elseif b >= 241 and b <= 243 then need = 3
        elseif b == 244 then need, hi = 3, 143
        end
        -- How many of the bytes after the lead continue it (the second byte has its own range).
        local fit = 0
        if need > 0 then
          local c = string.byte(s, i + 1)
          if c and c >= lo and c <= hi then
            fit = 1
            while fit < need do
              c = string.byte(s, i + 1 + fit)
              if not c or c < 128 or c > 191 then break end
              fit = fit + 1
            end
          end
        end
        if need > 0 and fit == need then
          i = i + 1 + need
        else
          valid = false
          out[#out + 1] = string.sub(s, runStart, i - 1)
          out[#out + 1] = '\239\191\189'
          i = i + 1 + fit
          runStart = i
        end
      end
      if valid then return s, true end
      out[#out + 1] = string.sub(s, runStart)
      return table.concat(out), false
    end
    local base64Alphabet = {}
    for k = 1, 64 do
      base64Alphabet[k - 1] = string.sub('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', k, k)
    end
    local function base64(s)
      local out = {}
      local n = #s
      local i = 1
      while i + 2 <= n do
        local a, b, c = string.byte(s, i, i + 2)
        local v = a * 65536 + b * 256 + c
        out[#out + 1] = base64Alphabet[math.floor(v / 262144)] .. base64Alphabet[math.floor(v / 4096) % 64] ..
          base64Alphabet[math.floor(v / 64) % 64] .. base64Alphabet[v % 64]
        i = i + 3
      end
      local left = n - i + 1
      if left == 2 then
        local a, b = string.byte(s, i, i + 1)
        local v = a * 65536 + b * 256
        out[#out + 1] = base64Alphabet[math.floor(v / 262144)] .. base64Alphabet[math.floor(v / 4096) % 64] ..
          base64Alphabet[math.floor(v / 64) % 64] .. '='
      elseif left == 1 then
        local v = string.byte(s, i) * 65536
        out[#out + 1] = base64Alphabet[math.floor(v / 262144)] .. base64Alphabet[math.floor(v / 4096) % 64] .. '=='
      end
      return table.concat(out)
    end
    local function rawMembers(element)
      local text, valid = utf8Text(element)
      local members = '"raw":' .. cjson.encode(text)
      if not valid then members = members .. ',"raw_base64":"' .. base64(element) .. '"' end
      return members
    end
    """#

    /// Claims the oldest elements of the chat list, then of the bulk list, into the processing hash under
    /// fresh sequence numbers (bulk ones plus 2^52, `Lane.bulkSequenceBase`, so the field tells recovery which
    /// list an element returns to).
    /// KEYS: queue, processing, sequence, deliveries, bulk queue.
    /// ARGV: most elements, most bytes (the first element of each list is taken even if larger), '1' if an isolated claim may
    /// be made now, the death count from which an element is claimed alone, the lowest sequence the caller
    /// may be given (one above the highest it already holds: if Redis came back from an older snapshot and
    /// the sequence rolled back, the sequence jumps ahead, so no claim identity is ever handed out twice),
    /// then the most elements and bytes the bulk list may give while the chat list has work (it had some
    /// to give now, or still holds some), and the most when it has none (docs/operations.md: bulk work holds at
    /// most `collector.bulk_share` of the room while `push:queue` has work).
    /// Death counts belong to claimed entries, not to bytes (`deliveries` holds both kinds, see `deathTally`):
    /// a producer's retried LPUSH makes byte-identical copies, and a copy is a suspect only if its own holders
    /// died. A copy that recovery returned left its count under the element's digest, as a tally of copies
    /// per death count; claiming a copy of those bytes takes the highest count waiting (the returned copies
    /// are consumed first) and files it under the claimed entry (`<processing key>#<sequence>`), where
    /// acknowledging it clears it and recovery finds it.
    /// From ARGV[4] deaths on it is claimed alone, so that if it kills this worker too, nothing else is held
    /// with it: only it reaches `recovery.max_deliveries`, and the messages once claimed with it get delivered.
    /// An element larger than ARGV[10] bytes (`collector.max_element_bytes`) never leaves Redis: it is
    /// dead-lettered here, into KEYS[6] (the dlq), with its first KB (non-ASCII bytes as '?', so the record is
    /// valid UTF-8 whatever the cut), its size, and the worker ARGV[11]; it is never digested, claimed or sent,
    /// so a 200 MB LPUSH costs a worker nothing.
    /// Returns {first sequence, {elements, oldest first, chat ones first}, {0-based offsets of counted
    /// elements}, isolated (0/1), blocked (0/1), how many of the elements are chat ones, how many oversized
    /// elements were dead-lettered}; blocked means the next element must be claimed alone and could not be now.
    static let claim = Script(name: "claim", source: """
    local allowIsolated = ARGV[3] == '1'
    local isolateFrom = tonumber(ARGV[4])
    local checkCounts = redis.call('HLEN', KEYS[4]) > 0
    local items = {}
    local counted = {}
    \(deathTally)
    -- The tallies of the digests this claim met (read once each), and the death count each claimed item took.
    local waiting = {}
    local touched = {}
    local given = {}
    local function waitingFor(digest)
      local tally = waiting[digest]
      if tally == nil then
        tally = parseTally(redis.call('HGET', KEYS[4], digest))
        waiting[digest] = tally
      end
      return tally
    end
    local bytes = 0
    local isolated = 0
    local blocked = 0
    local stop = false
    local maxElement = tonumber(ARGV[10]) or 1048576
    local oversized = 0
    local function deadLetterOversized(item)
      local head = string.gsub(string.sub(item, 1, 1024), '[\\128-\\255]', '?')
      local now = redis.call('TIME')
      local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
      local reason = 'Malformed: element is ' .. #item .. ' bytes, over the ' .. maxElement .. '-byte limit'
      redis.call('LPUSH', KEYS[6], '{"attempts":0,"bytes":' .. #item .. ',"failed_at":' .. string.format('%d', ms)
        .. ',"message":null,"raw":' .. cjson.encode(head) .. ',"raw_truncated":true,"reason":' .. cjson.encode(reason)
        .. ',"status":null,"worker":' .. cjson.encode(ARGV[11] or '') .. '}')
      oversized = oversized + 1
    end
    -- Takes from the oldest end of `list` while within `maxCount` more elements and `maxBytes` more bytes (its
    -- first element even if larger). Reads 4, then 16, then 64, then 100 at a time: a list of large elements
    -- (a broadcast of 10,000 tokens is 670 KB) is not copied 100 at a time to take one.
    local function take(list, maxCount, maxBytes)
      local taken = 0
      local dropped = 0
      local takenBytes = 0
      local done = false
      local step = 4
      while not done and taken < maxCount do
        local want = math.min(step, maxCount - taken)
        step = math.min(100, step * 4)
        local got = redis.call('LRANGE', list, -(taken + want), -(taken + 1))
        if #got == 0 then break end
        for k = #got, 1, -1 do
          local item = got[k]
          if #item > maxElement then
            -- Taken off the list and dead-lettered here; it counts against nothing the worker holds.
            deadLetterOversized(item)
            taken = taken + 1
            dropped = dropped + 1
            if taken >= maxCount then break end
          else
            if taken > dropped and takenBytes + #item > maxBytes then done = true break end
            local deaths = 0
            local digest
            if checkCounts then
              digest = redis.sha1hex(item)
              deaths = highestCount(waitingFor(digest))
            end
            if deaths >= isolateFrom then
              if #items == 0 and allowIsolated then
                items[1] = item
                counted[1] = 0
                given[1] = deaths
                takeCount(waiting[digest], deaths)
                touched[digest] = true
                isolated = 1
                taken = taken + 1
              elseif #items == 0 then
                blocked = 1
              end
              stop = true
              done = true
              break
            end
            if deaths > 0 then
              counted[#counted + 1] = #items
              given[#items + 1] = deaths
              takeCount(waiting[digest], deaths)
              touched[digest] = true
            end
            items[#items + 1] = item
            bytes = bytes + #item
            takenBytes = takenBytes + #item
            taken = taken + 1
            if taken >= maxCount then break end
          end
        end
        if #got < want then break end
      end
      if taken > 0 then redis.call('LTRIM', list, 0, -taken - 1) end
      return taken - dropped
    end
    local chat = take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
    if not stop then
      local busy = chat > 0 or redis.call('LLEN', KEYS[1]) > 0
      local bulkCount = tonumber(busy and ARGV[6] or ARGV[8])
      local bulkBytes = tonumber(busy and ARGV[7] or ARGV[9])
      bulkCount = math.min(bulkCount, tonumber(ARGV[1]) - chat)
      bulkBytes = math.min(bulkBytes, tonumber(ARGV[2]) - bytes)
      if bulkCount > 0 and bulkBytes > 0 then take(KEYS[5], bulkCount, bulkBytes) end
    end
    local n = #items
    if n == 0 then return {0, {}, {}, 0, blocked, 0, oversized} end
    local last = redis.call('INCRBY', KEYS[3], n)
    local first = last - n + 1
    local floor = tonumber(ARGV[5]) or 0
    if first < floor then
      first = floor
      last = floor + n - 1
      redis.call('SET', KEYS[3], string.format('%d', last))
    end
    local args = {}
    local held = {}
    for i = 1, n do
      local seq = first + i - 1
      if i > chat then seq = seq + 4503599627370496 end
      -- %d: Lua's own number formatting keeps 14 digits only.
      local field = string.format('%d', seq)
      args[#args + 1] = field
      args[#args + 1] = items[i]
      if #args >= 512 then
        redis.call('HSET', KEYS[2], unpack(args))
        args = {}
      end
      if given[i] then
        held[#held + 1] = KEYS[2] .. '#' .. field
        held[#held + 1] = string.format('%d', given[i])
      end
    end
    if #args > 0 then redis.call('HSET', KEYS[2], unpack(args)) end
    -- The claimed entries' counts are written before the tallies they came from are deleted, so the hash
    -- never empties half-way (see acknowledge: a deleted key must not be touched again while its slot migrates).
    local h = 1
    while h <= #held do
      local e = math.min(#held, h + 511)
      redis.call('HSET', KEYS[4], unpack(held, h, e))
      h = e + 1
    end
    local emptied = {}
    for digest in pairs(touched) do
      local value = formatTally(waiting[digest])
      if value == '' then emptied[#emptied + 1] = digest else redis.call('HSET', KEYS[4], digest, value) end
    end
    if #emptied > 0 then redis.call('HDEL', KEYS[4], unpack(emptied)) end
    return {first, items, counted, isolated, 0, chat, oversized}
    """)

    /// Acknowledges messages that have outcome records or a death count, and writes the records in one step:
    /// O(1) per message (HDEL by sequence), and the element is never sent back. Records are written only if
    /// the message was still claimed, so a retried acknowledgement (reply lost) or one for a message already
    /// recovered by another worker writes nothing twice. (Plain deliveries, the common case, need none of
    /// this: `WorkQueue.acknowledge` deletes their fields with HDEL.) KEYS: processing, dlq, feedback,
    /// filtered, deliveries. ARGV[1]: filtered cap, ARGV[2] and ARGV[3]: how many entries the dead-letter and
    /// feedback lists keep (0: all; `retention.*`); then per message: sequence, '1' if it has a death count,
    /// record count, records (each prefixed 'D' dead letter, 'F' feedback or 'A' filtered audit, or 'P' and
    /// a key index: the element itself moves to that parked list, KEYS[6...]). Returns how many were
    /// acknowledged.
    /// A hash whose last field is deleted is deleted with it, and on a cluster node that is migrating the
    /// slot, touching a deleted key again fails the script half-way ("non local key"). So the script counts
    /// what the processing and deliveries hashes hold and never touches one once it is empty, and deletes
    /// death counts in one step at the end.
    /// Moves up to ARGV[1] of the newest messages of a parked list back to its input list's consumer end, the
    /// oldest of them nearest that end, so they are claimed next; one step, so a message is in exactly one of
    /// the two lists whenever the script is interrupted. Newest first: each later call puts older messages
    /// nearer the consumer end, so a parked list returned in several calls comes back oldest first as a whole.
    /// KEYS: the parked list, the input list. Returns how many moved.
    static let unpark = Script(name: "unpark", source: """
    local n = tonumber(ARGV[1])
    local items = redis.call('LRANGE', KEYS[1], 0, n - 1)
    if #items == 0 then return 0 end
    redis.call('RPUSH', KEYS[2], unpack(items))
    redis.call('LTRIM', KEYS[1], #items, -1)
    return #items
    """)

    static let acknowledge = Script(name: "acknowledge", source: """
    local cap = tonumber(ARGV[1])
    local dlqCap = tonumber(ARGV[2]) or 0
    local feedbackCap = tonumber(ARGV[3]) or 0
    local held = redis.call('HLEN', KEYS[1])
    local acked = 0
    local lists = {D = {}, F = {}, A = {}}
    local keys = {D = KEYS[2], F = KEYS[3], A = KEYS[4]}
    local countFields = {}
    local i = 4
    while i <= #ARGV do
      local seq = ARGV[i]
      local counted = ARGV[i + 1] == '1'
      local n = tonumber(ARGV[i + 2])
      i = i + 3
      if held > 0 then
        -- A parked message's element moves to its parked list as it was written: read before it is deleted.
        local element = nil
        for r = i, i + n - 1 do
          if string.sub(ARGV[r], 1, 1) == 'P' then element = redis.call('HGET', KEYS[1], seq) end
        end
        if redis.call('HDEL', KEYS[1], seq) == 1 then
          -- Its own death count only: other copies of the same bytes keep theirs.
          if counted then countFields[#countFields + 1] = KEYS[1] .. '#' .. seq end
          held = held - 1
          acked = acked + 1
          for r = i, i + n - 1 do
            local record = ARGV[r]
            local tag = string.sub(record, 1, 1)
            if tag == 'P' then
              if element then redis.call('LPUSH', KEYS[tonumber(string.sub(record, 2))], element) end
            else
              local list = lists[tag]
              if list then list[#list + 1] = string.sub(record, 2) end
            end
          end
        end
      end
      i = i + n
    end
    for kind, list in pairs(lists) do
      local a = 1
      while a <= #list do
        local b = math.min(#list, a + 511)
        redis.call('LPUSH', keys[kind], unpack(list, a, b))
        a = b + 1
      end
    end
    if #lists.A > 0 then redis.call('LTRIM', KEYS[4], 0, cap - 1) end
    if #lists.D > 0 and dlqCap > 0 then redis.call('LTRIM', KEYS[2], 0, dlqCap - 1) end
    if #lists.F > 0 and feedbackCap > 0 then redis.call('LTRIM', KEYS[3], 0, feedbackCap - 1) end
    local counts = 0
    if #countFields > 0 then counts = redis.call('HLEN', KEYS[5]) end
    local d = 1
    while d <= #countFields and counts > 0 do
      local e = math.min(#countFields, d + 511)
      counts = counts - redis.call('HDEL', KEYS[5], unpack(countFields, d, e))
      d = e + 1
    end
    return acked
    """)

    /// Reads claimed elements back by sequence (after a claim whose reply was lost), with whether each has
    /// a death count of its own, as the claim itself reports it. KEYS: processing, deliveries. ARGV: sequences.
    /// Returns {element or false, counted (0/1)} per sequence.
    static let claimed = Script(name: "claimed", source: """
    local checkCounts = redis.call('HLEN', KEYS[2]) > 0
    local out = {}
    for i = 1, #ARGV do
      local element = redis.call('HGET', KEYS[1], ARGV[i])
      local counted = 0
      if element and checkCounts and redis.call('HEXISTS', KEYS[2], KEYS[1] .. '#' .. ARGV[i]) == 1 then counted = 1 end
      out[i] = {element or false, counted}
    end
    return out
    """)

    /// Returns a worker's claims to the queue's consuming end. The caller read the processing hash's fields
    /// once (HKEYS) and passes them in chunks, newest first, each chunk newest first, so that after all chunks
    /// the oldest claim is consumed first: every call is O(its chunk), the whole recovery linear in the claims.
    /// With ARGV[1] == '1' only if the worker is dead (its heartbeat key is gone). With ARGV[2] == '1' the holder
    /// is counted as having died: a claimed entry whose holders died ARGV[3] times is dead-lettered as
    /// PoisonMessage instead (never parsed here or by a worker: parsing may be what kills them), so one message
    /// cannot take the fleet down in turn. Each entry's deaths are its own (`deathTally`): a returned entry's
    /// count joins its digest's tally, so the copy claimed next carries it on. A field already gone
    /// (acknowledged meanwhile) is skipped.
    /// A processing list written by an earlier version is returned as it is, ARGV[4] elements per call (migration).
    /// A field of 2^52 or more (`Lane.bulkSequenceBase`) was claimed from the bulk list and returns there.
    /// KEYS: processing, queue, heartbeat, deliveries, dlq, workers, bulk queue.
    /// ARGV: only-if-dead, count-death, max deliveries, chunk, worker id, the poison dead letter before and after
    /// its `raw` members (`DeadLetterEntry.framingAroundRaw`), then the fields.
    /// Returns {returned, poisoned, remaining, {ids of poisoned messages}}; {-1, 0, 0, {}} if the worker lives.
    static let recover = Script(name: "recover", source: """
    if ARGV[1] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then return {-1, 0, 0, {}} end
    \(deathTally)
    \(rawMembers)
    local chunk = tonumber(ARGV[4])
    local kind = redis.call('TYPE', KEYS[1])['ok']
    local push = {}
    local pushBulk = {}
    local poisoned = 0
    local ids = {}
    local remaining = 0
    if kind == 'list' then
      local items = redis.call('LRANGE', KEYS[1], 0, chunk - 1)
      redis.call('LTRIM', KEYS[1], #items, -1)
      for i = 1, #items do push[i] = items[i] end
      remaining = redis.call('LLEN', KEYS[1])
    elseif kind == 'hash' then
      -- Counted, never read again once empty: deleting its last field deletes the hash, and a deleted key
      -- must not be touched again while its slot migrates (see acknowledge).
      local held = redis.call('HLEN', KEYS[1])
      local maxDeliveries = tonumber(ARGV[3])
      local checkCounts = redis.call('HLEN', KEYS[4]) > 0
      -- Entries' own counts, deleted at the end; what the returned copies add to their digests' tallies.
      local cleared = {}
      local returning = {}
      for i = 8, #ARGV do
        if held == 0 then break end
        local field = ARGV[i]
        local element = redis.call('HGET', KEYS[1], field)
        if element then
          redis.call('HDEL', KEYS[1], field)
          held = held - 1
          local deaths = 0
          if checkCounts then
            local countField = KEYS[1] .. '#' .. field
            local count = redis.call('HGET', KEYS[4], countField)
            if count then
              deaths = tonumber(count) or 0
              cleared[#cleared + 1] = countField
            end
          end
          if ARGV[2] == '1' then deaths = deaths + 1 end
          local poison = ARGV[2] == '1' and deaths >= maxDeliveries
          if deaths > 0 and not poison then
            local digest = redis.sha1hex(element)
            local tally = returning[digest] or {}
            tally[deaths] = (tally[deaths] or 0) + 1
            returning[digest] = tally
          end
          if poison then
            local ok, decoded = pcall(cjson.decode, element)
            if ok and type(decoded) == 'table' and type(decoded['id']) == 'string' then ids[#ids + 1] = decoded['id'] end
            -- The record is the worker's (DeadLetterEntry); only the element's text is added here.
            redis.call('LPUSH', KEYS[5], ARGV[6] .. rawMembers(element) .. ARGV[7])
            poisoned = poisoned + 1
          elseif (tonumber(field) or 0) >= 4503599627370496 then
            pushBulk[#pushBulk + 1] = element
          else
            push[#push + 1] = element
          end
        end
      end
      remaining = held
      -- Returned copies' counts are added first; the entries' own counts are deleted last, in one step, so
      -- the hash never empties before the script is done with it (the same reason).
      for digest, tally in pairs(returning) do
        local merged = parseTally(redis.call('HGET', KEYS[4], digest))
        for deaths, copies in pairs(tally) do merged[deaths] = (merged[deaths] or 0) + copies end
        redis.call('HSET', KEYS[4], digest, formatTally(merged))
      end
      if #cleared > 0 then redis.call('HDEL', KEYS[4], unpack(cleared)) end
    end
    local function pushAll(list, elements)
      local j = 1
      while j <= #elements do
        local k = math.min(#elements, j + 511)
        redis.call('RPUSH', list, unpack(elements, j, k))
        j = k + 1
      end
    end
    pushAll(KEYS[2], push)
    pushAll(KEYS[7], pushBulk)
    if remaining == 0 and ARGV[1] == '1' then redis.call('ZREM', KEYS[6], ARGV[5]) end
    return {#push + #pushBulk, poisoned, remaining, ids}
    """)
}

/// A Lua script run with EVALSHA: the source crosses the network once per node (EVAL after NOSCRIPT).
struct Script: Sendable {
    let name: String
    let source: String
    /// The SHA-1 of the source in hex, as Redis names the script in its cache.
    let digest: String

    init(name: String, source: String) {
        self.name = name
        self.source = source
        digest = SHA1.hex(Array(source.utf8))
    }
}
