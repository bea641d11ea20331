#!/usr/bin/python3
"""A client that sends many requests at once on one connection and times each answer, for DelayedAnswerTests
(python3-h2 4.1).

Stream 1 authenticates (the emulator allows one stream until a token is accepted); then --count requests leave in
bursts of 25, as fast as it can write them (--rounds times, each round once the one before is answered). With
--reset-every K, every K-th of them is reset (CANCEL) right after its request is complete, before its answer is due.
Once every other stream has its answer, one more request is sent, which must be answered too.
Prints one JSON object: "order" (stream ids in the order their answers arrived), "answers" (stream id -> how many
answers it got), "statuses" (stream id -> :status), "reset" (the streams reset), "min_wait_ms" (the shortest time
from a request's last frame sent to its answer), "errors" (h2's protocol errors), "closed", "last" and
"last_status" (the request sent after the others).
"""
import argparse
import json
import time

import h2.events

import h2_test_connection

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--bearer", required=True)
p.add_argument("--count", type=int, default=500)
p.add_argument("--reset-every", type=int, default=0)
p.add_argument("--rounds", type=int, default=1, help="send the --count requests this many times, one round after the other")
p.add_argument("--timeout", type=float, default=30)
args = p.parse_args()

sock, conn = h2_test_connection.connect(args.port, max_concurrent_streams=1000)

body = b'{"aps":{"alert":"hi"}}'
result = {"order": [], "answers": {}, "statuses": {}, "reset": [], "min_wait_ms": None, "errors": [], "closed": False}
sent_at = {}


def queue_request(stream_id):
    conn.send_headers(stream_id, [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
                                  (":path", "/3/device/%064x" % stream_id), ("apns-topic", "com.example.chat"),
                                  ("apns-push-type", "alert"), ("authorization", "bearer " + args.bearer),
                                  ("content-length", str(len(body)))])
    conn.send_data(stream_id, body, end_stream=True)


def handle(event, now):
    if isinstance(event, h2.events.ResponseReceived):
        key = str(event.stream_id)
        result["order"].append(event.stream_id)
        result["answers"][key] = result["answers"].get(key, 0) + 1
        result["statuses"][key] = int(dict(event.headers)[":status"])
        if event.stream_id in sent_at:
            wait = (now - sent_at[event.stream_id]) * 1000
            if result["min_wait_ms"] is None or wait < result["min_wait_ms"]:
                result["min_wait_ms"] = wait


def pump(until):
    """Reads and handles frames until `until()` holds, the connection closes, or the timeout."""
    h2_test_connection.pump(sock, conn, result, until, args.timeout, handle)


queue_request(1)
sock.sendall(conn.data_to_send())
pump(lambda: "1" in result["answers"])

next_id = 3
for _ in range(args.rounds):
    stream_ids = [next_id + 2 * i for i in range(args.count)]
    next_id = stream_ids[-1] + 2
    expected = set()
    for start in range(0, len(stream_ids), 25):
        burst = stream_ids[start:start + 25]
        for stream_id in burst:
            queue_request(stream_id)
        now = time.monotonic()  # before the write: the emulator cannot have any of it earlier
        sock.sendall(conn.data_to_send())
        for index, stream_id in enumerate(burst, start):
            sent_at[stream_id] = now
            if args.reset_every and index % args.reset_every == 0:
                conn.reset_stream(stream_id, error_code=8)  # CANCEL: its request is complete, its answer not due yet
                result["reset"].append(stream_id)
            else:
                expected.add(stream_id)
        out = conn.data_to_send()
        if out:
            sock.sendall(out)
    pump(lambda: expected <= {int(k) for k in result["answers"]})

last = next_id
queue_request(last)
sent_at[last] = time.monotonic()
sock.sendall(conn.data_to_send())
pump(lambda: str(last) in result["answers"])
result["last"] = last
result["last_status"] = result["statuses"].get(str(last))
print(json.dumps(result))
