import PushCore
import RedisClient

/// An app's rate budget shared by the fleet (`RedisKeys.rateBudget`): a token bucket per limit in one hash, kept by a
/// script so that taking a batch of permits is one atomic call whichever worker makes it.
///
/// The bucket starts empty (a worker that sent on its own rate until it reached Redis, or a fleet restarted a
/// moment ago, must not add a burst on top), fills at the rate in effect and holds a twentieth of a second of it:
/// the vendors count fixed one-second windows, and a bucket that held a second would let a fleet that was quiet
/// for a moment send up to twice the rate in the next window. Held to a twentieth, any window sees at most the rate
/// and a twentieth, and the little the workers hold between exchanges (`FleetRateShare`). Workers wanting more
/// than the bucket holds (a batch of 1,000 tokens) gather it over several exchanges. An over-rate answer carried by a call halves the rate in effect, at most once a second (the requests in
/// flight when the vendor began refusing come back together, one event) and down to a sixteenth of the configured
/// rate; each 30 seconds without one doubles it back, up to the configured rate. Times are Redis's own clock
/// (`TIME`), one clock for the whole fleet; a test passes its own. The hash expires after a minute unused.
public struct FleetRateBudget: Sendable {
    let runner: ScriptRunner
    let keys: RedisKeys

    public init(connection: any RedisCommands, keys: RedisKeys) {
        runner = ScriptRunner(connection: connection)
        self.keys = keys
    }

    /// Takes up to what `request` asks for from the budget of `share` (`FleetRateShare.key`), with its configured
    /// rates; `nowMillis` for a test's clock (nil: Redis's).
    public func take(_ request: FleetRateRequest, share: String, requestsPerSecond: Int?, tokensPerSecond: Int?,
                     nowMillis: Int64? = nil, recoveryMillis: Int64 = 30_000, spacingMillis: Int64 = 1_000) async throws -> FleetRateGrant {
        let arguments: [String] = [
            String(requestsPerSecond ?? 0), String(tokensPerSecond ?? 0),
            String(max(0, request.requests)), String(max(0, request.tokens)), request.overRate ? "1" : "0",
            String(recoveryMillis), String(spacingMillis), nowMillis.map(String.init) ?? "",
        ]
        let reply = try await runner.run(Self.script, keys: [keys.rateBudget(share: share)], arguments: arguments.map { Array($0.utf8) })
        let values = (reply.array ?? []).map { $0.integer ?? 0 }
        guard values.count == 5 else { throw RedisError.server("the rate budget script answered \(reply)") }
        return FleetRateGrant(requests: Int(clamping: values[0]), tokens: Int(clamping: values[1]), waitMillis: Int(clamping: values[2]),
                              requestsPerSecond: values[3] > 0 ? Int(clamping: values[3]) : nil,
                              tokensPerSecond: values[4] > 0 ? Int(clamping: values[4]) : nil)
    }

    /// KEYS[1] the budget; ARGV: configured requests/s and tokens/s (0: none), requests and tokens asked for, 1 for
    /// an over-rate answer, the recovery period and the lowering spacing (ms), the time in ms ("" for Redis's).
    /// Answers {requests granted, tokens granted, ms until what was asked for is there, requests/s, tokens/s in effect}.
    /// Fields: r, t (units, fractional), ts (last fill, ms), lv (halvings in effect, 0-4), lo (last lowering, ms),
    /// ca (last over-rate answer or step back up, ms).
    static let script = Script(name: "rate-budget", source: """
    local now
    if ARGV[8] ~= '' then
      now = tonumber(ARGV[8])
    else
      local time = redis.call('TIME')
      now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    local confR, confT = tonumber(ARGV[1]), tonumber(ARGV[2])
    local askR, askT = tonumber(ARGV[3]), tonumber(ARGV[4])
    local recovery, spacing = tonumber(ARGV[6]), tonumber(ARGV[7])
    local h = redis.call('HMGET', KEYS[1], 'r', 't', 'ts', 'lv', 'lo', 'ca')
    local r, t = tonumber(h[1]) or 0, tonumber(h[2]) or 0
    local ts, lv = tonumber(h[3]) or now, tonumber(h[4]) or 0
    local lo, ca = tonumber(h[5]), tonumber(h[6]) or now
    local function rate(conf)
      if conf <= 0 then return 0 end
      return math.max(math.max(1, math.floor(conf / 16)), math.floor(conf / 2 ^ lv))
    end
    local function cap(conf)
      return math.max(1, math.floor(rate(conf) / 20))
    end
    -- A clock behind the last fill (a failover to a node whose clock lags) is no time passing.
    if now > ts then
      local elapsed = now - ts
      r = math.min(cap(confR), r + elapsed * rate(confR) / 1000)
      t = math.min(cap(confT), t + elapsed * rate(confT) / 1000)
      ts = now
    end
    while lv > 0 and now - ca >= recovery do
      lv = lv - 1
      ca = ca + recovery
    end
    if ARGV[5] == '1' then
      ca = math.max(ca, now)
      if lo == nil or now - lo >= spacing or now < lo then
        lo = now
        if lv < 4 then lv = lv + 1 end
        r = math.min(r, cap(confR))
        t = math.min(t, cap(confT))
      end
    end
    local gr, gt, wait = 0, 0, 0
    if confR > 0 and askR > 0 then
      gr = math.min(askR, math.floor(r))
      r = r - gr
      if gr < askR then wait = math.max(wait, math.ceil((math.min(askR - gr, cap(confR)) - r) * 1000 / rate(confR))) end
    end
    if confT > 0 and askT > 0 then
      gt = math.min(askT, math.floor(t))
      t = t - gt
      if gt < askT then wait = math.max(wait, math.ceil((math.min(askT - gt, cap(confT)) - t) * 1000 / rate(confT))) end
    end
    local fields = {'r', tostring(r), 't', tostring(t), 'ts', tostring(ts), 'lv', tostring(lv), 'ca', tostring(ca)}
    if lo ~= nil then
      table.insert(fields, 'lo')
      table.insert(fields, tostring(lo))
    end
    redis.call('HSET', KEYS[1], unpack(fields))
    redis.call('PEXPIRE', KEYS[1], 60000)
    return {gr, gt, math.max(0, wait), rate(confR), rate(confT)}
    """)
}
