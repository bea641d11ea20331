#!/usr/bin/env python3
"""Pipeline benchmark: a local redis-server and the APNs emulator (HTTP/2+TLS, checking every JWT),
N messages enqueued beforehand, then the release worker drains them. Prints notifications/s and the
worker's CPU time per notification. Figures vary with the machine's load: compare runs made together."""
import argparse, json, os, shutil, signal, socket, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def resp(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out

class Redis:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port)); self.buf = b""
    def _line(self):
        while b"\r\n" not in self.buf: self.buf += self.s.recv(65536)
        line, self.buf = self.buf.split(b"\r\n", 1); return line
    def call(self, *args):
        self.s.sendall(resp(list(args))); line = self._line()
        if line[:1] == b":": return int(line[1:])
        if line[:1] == b"*":
            return [self._bulk() for _ in range(int(line[1:]))]
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0: return None
            while len(self.buf) < n + 2: self.buf += self.s.recv(65536)
            v, self.buf = self.buf[:n], self.buf[n + 2:]; return v
        return line
    def _bulk(self):
        n = int(self._line()[1:])
        while len(self.buf) < n + 2: self.buf += self.s.recv(65536)
        v, self.buf = self.buf[:n], self.buf[n + 2:]; return v
    def fill(self, messages):
        chunks = 0
        for i in range(0, len(messages), 1000):
            self.s.sendall(resp(["LPUSH", "push:queue"] + messages[i:i + 1000])); chunks += 1
        for _ in range(chunks): self._line()

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f: fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def redis_cpu(r):
    info = r.call("INFO", "cpu")
    info = info.decode() if isinstance(info, bytes) else ""
    return sum(float(line.split(":")[1]) for line in info.splitlines() if line.startswith(("used_cpu_sys:", "used_cpu_user:")))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--tokens", type=int, default=1, help="tokens per message")
    ap.add_argument("--kind", default="private")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--latency-ms", type=int, default=0, help="round trip the emulator adds")
    ap.add_argument("--emulator-threads", type=int, default=1)
    ap.add_argument("--max-streams", type=int, default=0, help="the emulator's SETTINGS_MAX_CONCURRENT_STREAMS (Apple's collapse: 1)")
    ap.add_argument("--check-duplicates", action="store_true",
                    help="the emulator records every accepted notification to count those sent twice (costs its CPU)")
    ap.add_argument("--workers", type=int, default=1, help="worker processes sharing the one Redis")
    ap.add_argument("--rate", type=int, default=0,
                    help="enqueue at this many messages/s while the worker runs (with enqueued_at) instead of beforehand; "
                         "prints queue-to-APNs p50/p99 from the worker's /metrics")
    a = ap.parse_args()
    worker = os.path.join(root, ".build/release/worker")
    run = tempfile.mkdtemp(prefix="push-bench-")
    procs = []
    try:
        rport, aport = free_port(), free_port()
        procs.append(subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--dir", run,
                                       "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL))
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-out", f"{run}/key.p8"], check=True, capture_output=True)
        emulator = os.path.join(root, ".build/release/apns-emulator")
        args = [emulator, "--port", str(aport), "--write-ca", f"{run}/ca.pem", "--provider-key", f"BENCH00001:BENCH00001:{run}/key.p8",
                "--threads", str(a.emulator_threads)]
        if a.latency_ms: args += ["--latency-ms", str(a.latency_ms)]
        if a.max_streams: args += ["--max-streams", str(a.max_streams)]
        if a.check_duplicates: args += ["--record", f"{run}/delivered.jsonl"]
        procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL))
        time.sleep(0.5)
        r = Redis(rport)
        msgs, n = [], 0
        for i in range(a.messages):
            toks = ",".join('"%064x"' % (i * a.tokens + j + 1) for j in range(a.tokens))
            uuid = f',"uuid":"u{i}"' if a.kind != "private" else ""
            msgs.append('{"id":"b%d","kind":"%s"%s,"topic":"com.example.chat","tokens":[%s],"payload":{"aps":{"alert":"hello %d"}}%s}'
                        % (i, a.kind, uuid, toks, i, ',"enqueued_at":%d' if a.rate else ""))
        if not a.rate: r.fill(msgs)
        total = a.messages * a.tokens
        env = dict(os.environ, REDIS_URL=f"redis://127.0.0.1:{rport}/0", APNS_ENDPOINT=f"https://127.0.0.1:{aport}",
                   APNS_CA_FILE=f"{run}/ca.pem", APNS_CONNECTIONS=str(a.connections),
                   APNS_APPS_0_TOPIC="com.example.chat", APNS_APPS_0_TEAM_ID="BENCH00001",
                   APNS_APPS_0_KEY_ID="BENCH00001", APNS_APPS_0_KEY_FILE=f"{run}/key.p8")
        redis_cpu_before = redis_cpu(r)
        start = time.monotonic()
        mport = free_port()
        workers = [subprocess.Popen([worker, "run"], env=dict(env, WORKER_ID=f"bench-{n}",
                                                              METRICS_LISTEN=f"127.0.0.1:{mport}" if n == 0 else ""),
                                    stderr=open(f"{run}/worker{n}.log", "w"))
                   for n in range(a.workers)]
        if a.rate:
            # Paced: a batch every 10 ms, each message stamped with the time it is enqueued.
            per_tick, sent, tick = max(1, a.rate // 100), 0, time.monotonic()
            while sent < len(msgs):
                now_ms = int(time.time() * 1000)
                batch = [m % now_ms for m in msgs[sent:sent + per_tick]]
                r.call("LPUSH", "push:queue", *batch)
                sent += len(batch)
                tick += 0.01
                time.sleep(max(0, tick - time.monotonic()))
        while True:
            if r.call("LLEN", "push:queue") == 0 and not r.call("KEYS", "push:processing:*"): break
            time.sleep(0.02)
        elapsed = time.monotonic() - start
        redis_us = (redis_cpu(r) - redis_cpu_before) / a.messages * 1e6
        cpu = sum(cpu_seconds(w.pid) for w in workers)
        def peak_rss_mb(pid):
            with open(f"/proc/{pid}/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
        peak = max(peak_rss_mb(w.pid) for w in workers)
        latency = ""
        if a.rate:
            import urllib.request
            text = urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=5).read().decode()
            buckets = []
            for line in text.splitlines():
                if line.startswith("push_queue_to_apns_seconds_bucket"):
                    le = line.split('le="')[1].split('"')[0]
                    buckets.append((float("inf") if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
            buckets.sort()
            count = buckets[-1][1] if buckets else 0
            def quantile(q):
                for le, c in buckets:
                    if count and c >= q * count: return f"<= {le * 1000:g} ms"
                return "n/a"
            latency = f"queue_to_apns p50 {quantile(0.5)}, p99 {quantile(0.99)} (histogram buckets, {count:.0f} notifications)"
        for w in workers: w.send_signal(signal.SIGTERM)
        for w in workers: w.wait(30)
        dlq = r.call("LLEN", "push:dlq")
        print(f"messages={a.messages} tokens/message={a.tokens} kind={a.kind} connections={a.connections} workers={a.workers}")
        print(f"notifications={total} elapsed_s={elapsed:.2f} rate_per_s={total / elapsed:,.0f}")
        twice = ""
        if a.check_duplicates:
            time.sleep(0.3)  # the emulator's record file is written as answers go out
            tokens = [json.loads(line)["token"] for line in open(f"{run}/delivered.jsonl")]
            twice = f" sent_twice={len(tokens) - len(set(tokens))} (notifications APNs accepted more than once)"
        print(f"worker_cpu_s={cpu:.2f} cpu_us_per_notification={cpu / total * 1e6:.1f} dead_letters={dlq}{twice} "
              f"worker_peak_rss_mb={peak:.0f}")
        print(f"redis_cpu_us_per_message={redis_us:.2f} (INFO cpu; the fleet ceiling of one Redis core is about "
              f"{1e6 / redis_us:,.0f} messages/s at this cost)")
        stats = []
        for line in r.call("INFO", "commandstats").decode().splitlines():
            if line.startswith("cmdstat_"):
                name, rest = line[len("cmdstat_"):].split(":", 1)
                fields = dict(kv.split("=") for kv in rest.split(","))
                stats.append((float(fields["usec"]), name, int(fields["calls"])))
        top = ", ".join(f"{n} {u / 1e3:.0f} ms in {c} calls" for u, n, c in sorted(stats, reverse=True)[:5])
        print(f"redis_top_commands: {top}")
        if latency: print(latency)
        print(f"latency_ms={a.latency_ms} (includes worker start-up; the emulator and redis share the same {os.cpu_count()} cores)")
    finally:
        for p in procs: p.kill()
        shutil.rmtree(run, ignore_errors=True)

main()
