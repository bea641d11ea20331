#!/usr/bin/env python3
"""A vendor server at its capacity: the worker against h2load on the same server (run by scripts/bench.sh
--vendor-capacity). The emulator's Huawei side answers every send LATENCY ms after it came, on one h2 connection of
STREAMS streams, so the server serves at most STREAMS requests per LATENCY: that is its capacity. h2load with one
connection of STREAMS streams measures what the server gives a client that keeps every stream busy; the worker,
given the same one connection, sends TOKENS Huawei v1 tokens in batches of 1,000 from Redis (300,000 by default: three
rounds of the server's streams, as h2load's 300 requests), timed from the first request's arrival to the last answer. Prints both rates in
tokens/s, their ratio, and whether the worker parked anything (it must not: a busy server is not a stalled one).

With --http1 the server offers HTTP/1.1 alone (as Huawei documents), and the messages are one-token chat, one
request each: the worker's pool grows toward huawei.max_connections (64 by default), and the figure is requests/s
(no h2load run: h2load speaks h2).

Usage: scripts/bench-vendor.py WORKER EMULATOR [--tokens N] [--latency-ms L] [--streams S] [--http1]
"""
import argparse
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

APP_ID = "104123456"
SECRET = "c2VjcmV0LWZvci1iZW5jaA=="
TOPIC = "com.example.chat"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"bench-vendor: timed out waiting for {what}")


def https_json(url, ca, data=None, headers=None):
    context = ssl.create_default_context(cafile=ca)
    request = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        return json.loads(answer.read())


def tokens(start, count):
    return [f"bench{n}-IQAAAACy0kYhAAB{n:08d}Xk/9+Zq7==" for n in range(start, start + count)]


def delivered(endpoint, ca):
    return https_json(f"{endpoint}/_emulator/huawei/stats", ca).get("delivered", 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("worker")
    ap.add_argument("emulator")
    ap.add_argument("--tokens", type=int, default=300_000)
    ap.add_argument("--latency-ms", type=int, default=1000)
    ap.add_argument("--streams", type=int, default=100)
    ap.add_argument("--http1", action="store_true", help="HTTP/1.1 alone, one-token messages: requests/s")
    a = ap.parse_args()
    run = tempfile.mkdtemp(prefix="push-bench-vendor-")
    processes = []
    try:
        secret_file = f"{run}/huawei-secret.txt"
        with open(secret_file, "w") as f:
            f.write(SECRET + "\n")
        ca = f"{run}/ca.pem"
        emulator_log = open(f"{run}/emulator.log", "w")
        emulator = subprocess.Popen([a.emulator, "--port", "0", "--write-ca", ca, "--vendor-port", "0",
                                     "--vendor-max-streams", str(a.streams), "--huawei-app", f"{APP_ID}:{secret_file}",
                                     "--huawei-latency-ms", str(a.latency_ms)] + (["--vendor-http1-only"] if a.http1 else []),
                                    stdout=emulator_log, stderr=subprocess.STDOUT)
        processes.append(emulator)

        def vendor_endpoint():
            text = open(f"{run}/emulator.log").read()
            found = re.search(r"vendor listening on (https://\S+)", text)
            return found.group(1) if found else None
        endpoint = wait_for(vendor_endpoint, 60, "the emulator")
        redis_port = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no", "--dir", run], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(redis)

        if a.http1:
            return http1(a, run, endpoint, ca, secret_file, redis_port, processes)
        # h2load: one connection of STREAMS streams, every request a batch of 1,000 tokens, with a token of the
        # emulator's own OAuth endpoint.
        form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": APP_ID, "client_secret": SECRET}).encode()
        access = https_json(f"{endpoint}/oauth2/v3/token", ca, form, {"content-type": "application/x-www-form-urlencoded"})["access_token"]
        body = {"validate_only": False, "message": {"token": tokens(10_000_000, 1000), "android": {
            "category": "IM", "notification": {"title": "Alice", "body": "capacity", "click_action": {"type": 3}}}}}
        with open(f"{run}/body.json", "w") as f:
            json.dump(body, f)
        requests = max(a.streams * 3, 1)
        started = time.time()
        out = subprocess.run(["h2load", "-n", str(requests), "-c", "1", "-m", str(a.streams), "-d", f"{run}/body.json",
                              "-H", f"authorization: Bearer {access}", "-H", "content-type: application/json",
                              f"{endpoint}/v1/{APP_ID}/messages:send"], capture_output=True, text=True)
        elapsed = time.time() - started
        done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", out.stdout)
        if not done or int(done.group(2)) != requests:
            raise SystemExit("bench-vendor: h2load did not succeed:\n" + out.stdout[-2000:] + out.stderr[-2000:])
        h2load_rate = requests * 1000 / elapsed

        # The worker: TOKENS tokens in messages of 1,000, one connection like h2load's.
        batch = 1000
        messages = [json.dumps({"id": f"cap-{m}", "provider": "huawei", "topic": TOPIC, "kind": "group",
                                "tokens": tokens(m * batch, batch),
                                "payload": {"notification": {"title": "Alice", "body": "capacity"}}})
                    for m in range(a.tokens // batch)]
        wait_for(lambda: subprocess.run(["redis-cli", "-p", str(redis_port), "PING"], capture_output=True).returncode == 0, 30, "redis")
        for m in messages:
            subprocess.run(["redis-cli", "-p", str(redis_port), "LPUSH", "push:queue", m], stdout=subprocess.DEVNULL, check=True)
        metrics_port = free_port()
        environment = dict(os.environ, REDIS_URL=f"redis://127.0.0.1:{redis_port}", WORKER_ID="capacity",
                           METRICS_LISTEN=f"127.0.0.1:{metrics_port}", COLLECTOR_MAX_IN_FLIGHT=str(a.tokens * 2),
                           HUAWEI_ENDPOINT=endpoint, HUAWEI_TOKEN_URI=f"{endpoint}/oauth2/v3/token", HUAWEI_CA_FILE=ca,
                           HUAWEI_CONNECTIONS="1", HUAWEI_MAX_CONNECTIONS="1", HUAWEI_REQUEST_TIMEOUT_MS=str(max(10_000, a.latency_ms * 5)),
                           HUAWEI_APPS_0_TOPIC=TOPIC, HUAWEI_APPS_0_APP_ID=APP_ID, HUAWEI_APPS_0_CLIENT_SECRET_FILE=secret_file,
                           HUAWEI_APPS_0_CATEGORY="IM", HUAWEI_APPS_0_TOKENS_PER_S="100000000")
        worker_log = open(f"{run}/worker.log", "w")
        before = delivered(endpoint, ca)
        worker = subprocess.Popen([a.worker, "run"], env=environment, stdout=worker_log, stderr=subprocess.STDOUT)
        processes.append(worker)
        # From the first request's arrival at the server to the worker's last answer: every round the server's
        # latency takes is in it, as in h2load's time.
        first_arrival = []
        def worker_delivered():
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
            except OSError:
                return 0
            return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                       if line.startswith("push_notifications_total{") and 'provider="huawei"' in line and 'outcome="delivered"' in line)
        def progress():
            if not first_arrival and delivered(endpoint, ca) - before > 0:
                first_arrival.append(time.time())
            return worker_delivered() >= a.tokens
        wait_for(progress, 600, "the worker's deliveries")
        finished = time.time()
        worker_rate = a.tokens / max(finished - first_arrival[0], 0.001)
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
        parked = sum(float(line.split()[-1]) for line in metrics.splitlines()
                     if line.startswith("push_messages_parked_total") and 'provider="huawei"' in line)
        print(f"vendor at capacity (Huawei v1, {a.latency_ms} ms answers, 1 connection of {a.streams} streams, batches of 1,000):")
        print(f"  h2load   {h2load_rate:10.0f} tokens/s ({requests} requests)")
        print(f"  worker   {worker_rate:10.0f} tokens/s ({a.tokens} tokens, first request in to last answer out)")
        print(f"  ratio    {worker_rate / h2load_rate:10.2f}x")
        print(f"  parked   {parked:10.0f} messages")
    finally:
        for p in reversed(processes):
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(run, ignore_errors=True)


def http1(a, run, endpoint, ca, secret_file, redis_port, processes):
    """One-token chat over HTTP/1.1: TOKENS messages of one token each, every one a request; the pool as configured by
    default (huawei.max_connections 64)."""
    wait_for(lambda: subprocess.run(["redis-cli", "-p", str(redis_port), "PING"], capture_output=True).returncode == 0, 30, "redis")
    messages = [json.dumps({"id": f"one-{n}", "provider": "huawei", "topic": TOPIC, "kind": "private", "tokens": tokens(n, 1),
                            "payload": {"notification": {"title": "Alice", "body": f"hi {n}"}}}) for n in range(a.tokens)]
    for start in range(0, len(messages), 500):
        subprocess.run(["redis-cli", "-p", str(redis_port), "LPUSH", "push:queue"] + messages[start:start + 500],
                       stdout=subprocess.DEVNULL, check=True)
    metrics_port = free_port()
    environment = dict(os.environ, REDIS_URL=f"redis://127.0.0.1:{redis_port}", WORKER_ID="http1",
                       METRICS_LISTEN=f"127.0.0.1:{metrics_port}",
                       HUAWEI_ENDPOINT=endpoint, HUAWEI_TOKEN_URI=f"{endpoint}/oauth2/v3/token", HUAWEI_CA_FILE=ca,
                       HUAWEI_APPS_0_TOPIC=TOPIC, HUAWEI_APPS_0_APP_ID=APP_ID, HUAWEI_APPS_0_CLIENT_SECRET_FILE=secret_file,
                       HUAWEI_APPS_0_CATEGORY="IM", HUAWEI_APPS_0_TOKENS_PER_S="100000000")
    worker = subprocess.Popen([a.worker, "run"], env=environment, stdout=open(f"{run}/worker.log", "w"), stderr=subprocess.STDOUT)
    processes.append(worker)
    marks = []
    def progress():
        got = delivered(endpoint, ca)
        if not marks and got >= a.tokens // 10:
            marks.append((time.time(), got))
        if len(marks) == 1 and got >= a.tokens * 9 // 10:
            marks.append((time.time(), got))
        return got >= a.tokens
    wait_for(progress, 600, "the worker's deliveries")
    rate = (marks[1][1] - marks[0][1]) / max(marks[1][0] - marks[0][0], 0.001)
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    connections = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                      if line.startswith("push_provider_connections{") and 'provider="huawei"' in line)
    protocol = [line.split('protocol="')[1].split('"')[0] for line in metrics.splitlines()
                if line.startswith("push_http_protocol{") and 'provider="huawei"' in line and float(line.rsplit(" ", 1)[1]) == 1]
    print(f"Huawei over HTTP/1.1 at {a.latency_ms} ms, one token a request: {rate:.0f} requests/s "
          f"({a.tokens} messages, the middle 80%), {connections:.0f} connections open at the end, protocol {', '.join(protocol) or '?'}")


if __name__ == "__main__":
    sys.exit(main())
