#!/usr/bin/env python3
"""A peer sender for the benchmark: Debian's python3-aioapns (asyncio and h2), the Python APNs sender.

aioapns always connects to Apple's hosts; the benchmark points its development host at the local endpoint
(a class attribute) and trusts the endpoint's CA. N notifications are generated in memory and sent with at
most --concurrency at once over --connections connections (aioapns's own pool). Prints one JSON line like
the Go sender's."""
import argparse, asyncio, json, ssl, sys, time

from aioapns import APNs, NotificationRequest, PushType
import aioapns.connection as connection


async def send_all(a):
    context = ssl.create_default_context(cafile=a.ca)
    # aioapns offers no ALPN (Apple's servers speak HTTP/2 without it); nginx needs "h2" to choose HTTP/2.
    context.set_alpn_protocols(["h2"])
    client = APNs(key=a.key, key_id=a.key_id, team_id=a.team, topic=a.topic, use_sandbox=True,
                  max_connections=a.connections, ssl_context=context)
    gate = asyncio.Semaphore(a.concurrency)
    ok = failed = 0

    async def one(i):
        nonlocal ok, failed
        async with gate:
            request = NotificationRequest(device_token="%064x" % i, message={"aps": {"alert": "hello %d" % i}},
                                          push_type=PushType.ALERT)
            try:
                result = await client.send_notification(request)
                if result.is_successful: ok += 1
                else: failed += 1
            except Exception:
                failed += 1

    start = time.monotonic()
    # Tasks are created in slices so that a large N does not hold N coroutines at once.
    pending = set()
    for i in range(1, a.n + 1):
        pending.add(asyncio.ensure_future(one(i)))
        if len(pending) >= a.concurrency * 2:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    if pending: await asyncio.wait(pending)
    return ok, failed, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--key-id", required=True)
    ap.add_argument("--team", required=True)
    ap.add_argument("--topic", default="com.example.chat")
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=1000)
    a = ap.parse_args()
    connection.APNsDevelopmentClientProtocol.APNS_SERVER = a.host
    connection.APNsDevelopmentClientProtocol.APNS_PORT = a.port
    ok, failed, seconds = asyncio.run(send_all(a))
    print(json.dumps({"sender": "aioapns", "notifications": a.n, "ok": ok, "failed": failed, "seconds": seconds}))


if __name__ == "__main__":
    sys.exit(main())
