#!/usr/bin/env python3
"""Where Redis's CPU goes in a claim: the claim and acknowledge scripts as the worker runs them, split in two
phases, and variants of the claim that each leave one step out, against a redis-server started here. Prints
Redis CPU (INFO cpu) and INFO commandstats per message. Usage: claim_variants.py [BATCH] [VARIANT ...]
(docs/queue-protocol.md, "Cost", quotes its figures)."""
import os, re, socket, subprocess, sys, tempfile, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SRC = open(os.path.join(ROOT, "Sources/QueueProtocol/QueueScripts.swift")).read()
def script(name):
    m = re.search(r'static let %s = Script\(name: "%s", source: """\n(.*?)\n    """\)' % (name, name), SRC, re.S)
    return "\n".join(l[4:] if l.startswith("    ") else l for l in m.group(1).split("\n"))
class R:
    def __init__(s, port):
        s.s = socket.create_connection(("127.0.0.1", port)); s.f = s.s.makefile("rb")
    def enc(s, args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)
    def call(s, *args):
        s.s.sendall(s.enc(args)); return s.read()
    def read(s):
        l = s.f.readline(); t = l[:1]; r = l[1:-2]
        if t == b"+": return r
        if t == b"-": raise Exception(r.decode())
        if t == b":": return int(r)
        if t == b"$":
            n = int(r)
            if n < 0: return None
            d = s.f.read(n + 2); return d[:-2]
        if t == b"*":
            n = int(r)
            return None if n < 0 else [s.read() for _ in range(n)]
def cpu(r):
    info = r.call("INFO", "cpu").decode()
    return sum(float(l.split(":")[1]) for l in info.splitlines() if l.startswith(("used_cpu_sys:", "used_cpu_user:")))
def cmdstats(r):
    out = {}
    for line in r.call("INFO", "commandstats").decode().splitlines():
        if line.startswith("cmdstat_"):
            name, rest = line[8:].split(":", 1)
            f = dict(kv.split("=") for kv in rest.split(","))
            out[name] = (int(f["calls"]), float(f["usec"]))
    return out
def start():
    port = 6500 + os.getpid() % 1000
    d = tempfile.mkdtemp()
    p = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", d], stdout=subprocess.DEVNULL)
    time.sleep(0.4)
    return p, R(port)


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
    token = "ab" * 32
    for s_ in range(0, count, 1000):
        r.call("LPUSH", key, *['{"id":"m%d","topic":"com.example.chat","tokens":["%s"],"payload":{"aps":{"alert":"hello %d"}}}'
                               % (n, token, n) for n in range(s_, s_ + 1000)])

def report(label, r, c0, n):
    st = cmdstats(r)
    print("%-24s %.2f us/msg; inside: " % (label, (cpu(r) - c0) / n * 1e6)
          + ", ".join("%s %.2f" % (k, v[1] / n) for k, v in sorted(st.items(), key=lambda x: -x[1][1])[:4]))

def protocol(batch):
    """The worker's own scripts: 100,000 claimed, then acknowledged, `batch` per call."""
    p, r = start()
    try:
        cs = r.call("SCRIPT", "LOAD", script("claim")).decode(); ak = r.call("SCRIPT", "LOAD", script("acknowledge")).decode()
        fill(r, "push:queue", 100000)
        keys = ["push:queue", "push:processing:w", "push:sequence", "push:deliveries", "push:queue:bulk"]
        held = []
        r.call("CONFIG", "RESETSTAT"); c0 = cpu(r)
        while len(held) < 100000:
            rep = r.call("EVALSHA", cs, 5, *keys, batch, 1 << 30, 1, 2, 0, 0, 0, 0, 0)
            held += list(range(rep[0], rep[0] + len(rep[1])))
        report("claim (batch %d)" % batch, r, c0, 100000)
        r.call("CONFIG", "RESETSTAT"); c0 = cpu(r)
        for i in range(0, 100000, batch):
            fin = held[i:i + batch]
            r.call("EVALSHA", ak, 5, "push:processing:w", "push:dlq", "push:feedback", "push:filtered", "push:deliveries", 100, len(fin), *fin)
        report("acknowledge (batch %d)" % batch, r, c0, 100000)
    finally:
        p.kill()

def variant(name, batch):
    p, r = start()
    try:
        sha = r.call("SCRIPT", "LOAD", V[name]).decode()
        fill(r, "q", 100000)
        r.call("CONFIG", "RESETSTAT"); c0 = cpu(r); n = 0
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
