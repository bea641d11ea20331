#!/usr/bin/python3
"""A client that opens a stream after the server's GOAWAY, or cancels streams, for EmulatorConnectionTests
(python3-h2 4.1).

One connection, frames timed by hand:
  stream 1 authenticates (the emulator allows one stream until a token is accepted) and is answered;
  streams 3 and 5 follow --gap-ms apart; the answer to 3 makes the emulator send GOAWAY (last stream id 5);
  once that GOAWAY has arrived, stream 7 is opened with its HEADERS and DATA in separate frames, as a busy client
  whose request was in flight does. Stream 7 is above the last stream id (never processed), and stream 5, accepted
  before the GOAWAY, must still be answered.
Prints one JSON object: each stream's :status or "reset:<code>", the GOAWAY's last stream id, and whether the
connection was closed before stream 5's answer.
"""
import argparse
import json
import time

import h2.connection
import h2.events

import h2_test_connection

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--bearer", required=True)
p.add_argument("--gap-ms", type=int, default=200)
p.add_argument("--timeout", type=float, default=10)
p.add_argument("--cancel", type=int, default=0,
               help="instead: after stream 1, open this many streams and reset each (CANCEL) before its body, "
                    "then send one more request, which must be answered, not refused")
args = p.parse_args()

sock, conn = h2_test_connection.connect(args.port)

body = b'{"aps":{"alert":"hi"}}'
result = {"streams": {}, "goaway_last_stream_id": None, "closed": False}


def headers(token):
    return [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
            (":path", "/3/device/" + token), ("apns-topic", "com.example.chat"), ("apns-push-type", "alert"),
            ("authorization", "bearer " + args.bearer), ("content-length", str(len(body)))]


def send_request(stream_id, token, split=False):
    conn.send_headers(stream_id, headers(token))
    if split:
        sock.sendall(conn.data_to_send())  # HEADERS alone first: the DATA arrives in a later read
        time.sleep(0.01)
    conn.send_data(stream_id, body, end_stream=True)
    sock.sendall(conn.data_to_send())


def handle(event, now):
    if isinstance(event, h2.events.ResponseReceived):
        result["streams"][str(event.stream_id)] = int(dict(event.headers)[":status"])
    elif isinstance(event, h2.events.StreamReset):
        result["streams"][str(event.stream_id)] = "reset:%d" % event.error_code
    elif isinstance(event, h2.events.ConnectionTerminated):
        result["goaway_last_stream_id"] = event.last_stream_id


def pump(until):
    """Reads and handles frames until `until()` holds, the connection closes, or the timeout."""
    h2_test_connection.pump(sock, conn, result, until, args.timeout, handle)


send_request(1, "%064x" % 1)
pump(lambda: "1" in result["streams"])
if args.cancel:
    # A client that gives up on requests (its deadline passed) resets their streams: each must free its slot.
    stream_id = 3
    for _ in range(args.cancel):
        # HEADERS, then the reset before the body: the emulator never gets to answer it.
        conn.send_headers(stream_id, headers("%064x" % stream_id))
        sock.sendall(conn.data_to_send())
        time.sleep(0.05)
        conn.reset_stream(stream_id, error_code=8)  # CANCEL
        sock.sendall(conn.data_to_send())
        stream_id += 2
    time.sleep(0.2)
    send_request(stream_id, "%064x" % stream_id)
    pump(lambda: str(stream_id) in result["streams"])
    result["last"] = stream_id
    print(json.dumps(result))
    raise SystemExit(0)
send_request(3, "%064x" % 3)
time.sleep(args.gap_ms / 1000)
send_request(5, "%064x" % 5)
pump(lambda: result["goaway_last_stream_id"] is not None)
if not result["closed"]:
    # h2 will not open a stream after GOAWAY: this one left before the client saw it, as far as the server can tell.
    conn.state_machine.state = h2.connection.ConnectionState.CLIENT_OPEN
    send_request(7, "%064x" % 7, split=True)
    pump(lambda: "5" in result["streams"])
print(json.dumps(result))
