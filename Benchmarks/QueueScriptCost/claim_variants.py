#!/usr/bin/env python3
"""Where Redis's CPU goes in a claim: the claim script and the plain acknowledgement (HDEL) as the worker runs
them, split in two phases, and variants of the claim that each leave one step out, against a redis-server started here. Prints
Redis CPU (INFO cpu) and INFO commandstats per message. Usage: claim_variants.py [BATCH] [VARIANT ...]
(docs/queue-protocol.md, "Cost", quotes its figures)."""
import os, re, subprocess, sys, tempfile, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench import Redis, command_stats, free_port, redis_cpu  # the pipeline benchmark's own Redis client

SRC = open(os.path.join(ROOT, "Sources/QueueProtocol/QueueScripts.swift")).read()


def script(name):
    """A script's Lua source, as QueueScripts.swift holds it."""
    m = re.search(r'static let %s = Script\(name: "%s", source: """\n(.*?)\n    """\)' % (name, name), SRC, re.S)
    return "\n".join(l[4:] if l.startswith("    ") else l for l in m.group(1).split("\n"))


def start():
    port = free_port()
    p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                          "--dir", tempfile.mkdtemp()], stdout=subprocess.DEVNULL)
    time.sleep(0.4)
    return p, Redis(port)


# Claims of `batch` elements from a 100,000-element list, each variant with one step more or less than the
# claim script (KEYS: list, hash, counter; ARGV[1]: batch). Every variant takes the elements the same way:
TAKE = """local got = redis.call('LRANGE', KEYS[1], -tonumber(ARGV[1]), -1)
redis.call('LTRIM', KEYS[1], 0, -#got - 1)
"""
SEQUENCE = "local first = redis.call('INCRBY', KEYS[3], #got) - #got + 1\n"


def hset_in_chunks(field, value):
    """A hash field per element, written 256 fields per HSET, as the claim script does."""
    return SEQUENCE + f"""local args = {{}}
for i = #got, 1, -1 do
  args[#args + 1] = {field}
  args[#args + 1] = {value}
  if #args >= 512 then redis.call('HSET', KEYS[2], unpack(args)) args = {{}} end
end
if #args > 0 then redis.call('HSET', KEYS[2], unpack(args)) end
"""


V = {
    "lrange_ltrim_count": TAKE + "return #got",
    "lrange_ltrim_return": TAKE + "return got",
    "lpush_chunks": TAKE + """local a = 1
while a <= #got do
  local b = math.min(#got, a + 511)
  redis.call('LPUSH', KEYS[2] .. 'l', unpack(got, a, b))
  a = b + 1
end
return #got""",
    "hset_seqfield_short": TAKE + hset_in_chunks("first + #got - i", "'x'") + "return #got",
    "hset_tostring": TAKE + hset_in_chunks("first + #got - i", "got[i]") + "return #got",
    "hset_format": TAKE + hset_in_chunks("string.format('%d', first + #got - i)", "got[i]") + "return #got",
    "hset_per_element": TAKE + SEQUENCE + """for i = #got, 1, -1 do
  redis.call('HSET', KEYS[2], first + #got - i, got[i])
end
return #got""",
    "hset_one_field": TAKE + SEQUENCE + "redis.call('HSET', KEYS[2], first, table.concat(got, '\\n'))\nreturn #got",
}


def fill(r, key, count):
    """`count` one-token messages, as a producer LPUSHes them."""
    r.fill(['{"id":"m%d","topic":"com.example.chat","tokens":["%s"],"payload":{"aps":{"alert":"hello %d"}}}'
            % (n, "ab" * 32, n) for n in range(count)], key)


def report(label, r, c0, n):
    print("%-24s %.2f us/msg; inside: " % (label, (redis_cpu(r) - c0) / n * 1e6)
          + ", ".join("%s %.2f" % (name, usec / n) for usec, name, _ in command_stats(r)[:4]))

def protocol(batch):
    """The worker's own calls: 100,000 claimed, then acknowledged (plain deliveries), `batch` per call."""
    p, r = start()
    try:
        cs = r.call("SCRIPT", "LOAD", script("claim")).decode()
        fill(r, "push:queue", 100000)
        keys = ["push:queue", "push:processing:w", "push:sequence", "push:deliveries", "push:queue:bulk"]
        held = []
        r.call("CONFIG", "RESETSTAT"); c0 = redis_cpu(r)
        while len(held) < 100000:
            rep = r.call("EVALSHA", cs, 5, *keys, batch, 1 << 30, 1, 2, 0, 0, 0, 0, 0)
            held += list(range(rep[0], rep[0] + len(rep[1])))
        report("claim (batch %d)" % batch, r, c0, 100000)
        r.call("CONFIG", "RESETSTAT"); c0 = redis_cpu(r)
        for i in range(0, 100000, batch):
            fin = held[i:i + batch]
            r.call("HDEL", "push:processing:w", *fin)  # plain deliveries: WorkQueue.acknowledge needs no script
        report("acknowledge (batch %d)" % batch, r, c0, 100000)
    finally:
        p.kill()

def variant(name, batch):
    p, r = start()
    try:
        sha = r.call("SCRIPT", "LOAD", V[name]).decode()
        fill(r, "q", 100000)
        r.call("CONFIG", "RESETSTAT"); c0 = redis_cpu(r); n = 0
        while n < 100000:
            rep = r.call("EVALSHA", sha, 3, "q", "h", "seq", batch)
            n += rep if isinstance(rep, int) else len(rep)
        report(name, r, c0, n)
    finally:
        p.kill()

if __name__ == "__main__":
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    protocol(batch)
    for name in sys.argv[2:] or ["lrange_ltrim_count", "lrange_ltrim_return", "lpush_chunks", "hset_seqfield_short", "hset_format", "hset_one_field"]:
        variant(name, batch)
