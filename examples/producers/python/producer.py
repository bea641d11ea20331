#!/usr/bin/python3
"""A producer for the push worker, in Python with Debian's python3-redis (redis-py).

    producer.py            enqueue one chat message and one group message
    producer.py feedback   pop push:feedback (dead tokens) without losing an entry, then exit

Configuration (environment):
    REDIS_URL          redis://[user:password@]host:port/db     default redis://127.0.0.1:6379/0
    PUSH_PREFIX        the worker's redis.prefix                 default push
    PUSH_SHARDS        the worker's redis.shards, comma-separated, in the same order (push:{0},push:{1},...);
                       unset: one shard, PUSH_PREFIX
    TOPIC              the app's bundle id (an app of the worker's apns.apps or fcm.apps)   default com.example.chat
    TOKENS             the receiver's device tokens, comma-separated (required to enqueue)
    PROVIDER           apns, fcm, huawei or xiaomi (an app of that provider's apps)   default apns
    RECEIVER, GROUP    who the chat message is for, and the group; they choose the shard   default user-42, group-7
    WAIT_REPLICAS      after each LPUSH, WAIT until this many replicas have it (0: do not wait)   default 0
    WAIT_TIMEOUT_MS    the longest such wait                     default 100
    REDIS_TIMEOUT_MS   the longest wait to connect, and for an answer (plus WAIT_TIMEOUT_MS for a WAIT)   default 5000
    FEEDBACK_CONSUMER  this consumer's name: its processing list is <prefix>:feedback:processing:<name>;
                       keep it stable across restarts               default the host name
"""
import json
import os
import socket
import sys
import time
import uuid
import zlib

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
PREFIX = os.environ.get("PUSH_PREFIX", "push")
SHARDS = [s for s in os.environ.get("PUSH_SHARDS", "").split(",") if s] or [PREFIX]
TOPIC = os.environ.get("TOPIC", "com.example.chat")
TOKENS = [t for t in os.environ.get("TOKENS", "").split(",") if t]
PROVIDER = os.environ.get("PROVIDER", "apns")
PROVIDERS = ("apns", "fcm", "huawei", "xiaomi")
WAIT_REPLICAS = int(os.environ.get("WAIT_REPLICAS", "0"))
WAIT_TIMEOUT_MS = int(os.environ.get("WAIT_TIMEOUT_MS", "100"))
TIMEOUT_MS = int(os.environ.get("REDIS_TIMEOUT_MS", "5000"))
CONSUMER = os.environ.get("FEEDBACK_CONSUMER") or socket.gethostname()


def shard_for(receiver):
    """The key prefix of the receiver's shard: CRC-32 of its id, modulo the number of shards.

    Every producer should hash the same way (all four examples use CRC-32), so that one receiver's pushes
    always go to one list and are taken in the order they were pushed. Any stable hash would do; Python's
    own hash() would not (it changes with every process)."""
    return SHARDS[zlib.crc32(receiver.encode()) % len(SHARDS)]


def payload(title, body):
    # The payload is the provider's: APNs's {"aps": ...}; for Android, FCM's message object without its target,
    # the one shape Huawei and Xiaomi take too (docs/vendors.md: the worker maps it into each vendor's request).
    # Xiaomi refuses a notification without a title, and counts title and body against its limits (docs/vendors.md).
    if PROVIDER == "apns":
        return {"aps": {"alert": {"title": title, "body": body}}}
    return {"notification": {"title": title, "body": body}}


def message(kind, title, body, **extra):
    msg = {
        # Your id, in every dead letter, feedback entry and log line about this message. It is not a
        # dedupe key: the worker sends every element it finds, so two elements with one id are two pushes.
        "id": "py-%s-%s" % (kind, uuid.uuid4().hex[:12]),
        "kind": kind,
        "topic": TOPIC,
        "tokens": TOKENS,
        "payload": payload(title, body),
        "enqueued_at": int(time.time() * 1000),  # lets the worker measure queue-to-provider latency
    }
    if PROVIDER != "apns":
        msg["provider"] = PROVIDER
    msg.update(extra)
    return msg


def enqueue(r, receiver, msg, bulk=False):
    """LPUSH one message onto its shard's queue: <prefix>:queue for pushes a person waits for,
    <prefix>:queue:bulk for broadcasts and other work that may wait."""
    key = shard_for(receiver) + (":queue:bulk" if bulk else ":queue")
    # Compact JSON: the element's bytes are what the worker reads (at most collector.max_element_bytes,
    # 1 MiB by default). separators= drops the spaces json.dumps puts in by default.
    element = json.dumps(msg, separators=(",", ":"), ensure_ascii=False)
    # LPUSH and WAIT in one pipeline: both go over one connection of the pool, in order. WAIT counts the writes of
    # its own connection, so a WAIT that the pool sent over another connection would wait for nothing.
    def send():
        # A new pipeline each time: execute() empties the pipeline it ran, even when it fails.
        pipe = r.pipeline(transaction=False)
        pipe.lpush(key, element)
        if WAIT_REPLICAS > 0:
            pipe.wait(WAIT_REPLICAS, WAIT_TIMEOUT_MS)
        return pipe.execute()
    try:
        replies = send()
    except (redis.ConnectionError, redis.TimeoutError):
        # The connection broke (or timed out, socket_timeout below) before the reply: the LPUSH may or may not
        # have happened. Pushing again may make a second message (the worker does not dedupe by id), not pushing
        # may lose this one. For chat a notification twice beats none, so push once more, and only once: the
        # client's own retries are off (see main), so this is the only place a push is repeated. An error
        # *reply* (NOPERM, OOM, WRONGTYPE: redis.ResponseError) means Redis did not apply it, and is raised as is.
        replies = send()
    if WAIT_REPLICAS > 0:
        # Durability. LPUSH is answered once the primary has the element in memory (and on disk first only
        # with appendfsync always). Replication is asynchronous: a failover right now would lose the
        # element. WAIT blocks until that many replicas have it, or the timeout passes. Fewer replicas than
        # asked means "not yet replicated", not "lost": do not push again (that would be a duplicate).
        acked = replies[-1]
        if acked < WAIT_REPLICAS:
            print("warning: %s reached %d of %d replicas within %d ms"
                  % (msg["id"], acked, WAIT_REPLICAS, WAIT_TIMEOUT_MS), file=sys.stderr)
    print("queued %s on %s" % (msg["id"], key))


def produce(r):
    if not TOKENS:
        sys.exit("TOKENS is empty: give the receiver's device tokens, comma-separated")
    receiver = os.environ.get("RECEIVER", "user-42")
    group = os.environ.get("GROUP", "group-7")
    # A 1:1 chat message to the receiver's devices.
    enqueue(r, receiver, message("private", "Alice", "Are you coming?"))
    # A group message: the same content for every member. Elements with one uuid (and identical topic,
    # headers and payload) that meet in one collection window are sent as one job, each token once. A group
    # is the receiver for the shard choice, so its messages stay on one list.
    enqueue(r, group, message("group", "Team", "Lunch at noon", uuid="%s-%s" % (group, uuid.uuid4().hex[:12])))


def handle(shard, entry):
    """What the backend does with a dead token: here, print it. In real life delete the token from the
    device table when `reason` is Unregistered (and the token was not registered again after `timestamp`).
    This must be idempotent: after a crash between handling and LREM, the entry is handled again."""
    try:
        fields = json.loads(entry)
        print("feedback %s: token=%s reason=%s message_id=%s"
              % (shard, fields.get("token"), fields.get("reason"), fields.get("message_id")))
    except ValueError:
        print("feedback %s: not JSON: %r" % (shard, entry))


def pop_feedback(r):
    """Pops every shard's feedback list without losing an entry if this process dies at any point.

    LMOVE moves the oldest entry (the worker LPUSHes, so the right end) onto this consumer's processing list
    in one atomic step; the entry is LREMed from there only after it was handled. At start, whatever the
    processing list still holds (a previous run died in between) is handled first. A consumer that runs all
    the time would use BLMOVE feedback processing RIGHT LEFT <timeout> instead, one loop per shard."""
    for shard in SHARDS:
        feedback = shard + ":feedback"
        # The same hash tag as the feedback list, so LMOVE stays in one slot on Redis Cluster.
        processing = "%s:feedback:processing:%s" % (shard, CONSUMER)
        for entry in reversed(r.lrange(processing, 0, -1)):  # oldest first
            handle(shard, entry)
            r.lrem(processing, 1, entry)
        while True:
            entry = r.lmove(feedback, processing, "RIGHT", "LEFT")
            if entry is None:
                break
            handle(shard, entry)
            r.lrem(processing, 1, entry)


def main():
    if PROVIDER not in PROVIDERS:
        sys.exit("PROVIDER is %r: one of %s" % (PROVIDER, ", ".join(PROVIDERS)))
    # decode_responses: entries come back as str.
    # Timeouts: a Redis that stops answering fails the call (redis.TimeoutError) instead of hanging the producer.
    # The read timeout also covers a WAIT, which may take WAIT_TIMEOUT_MS to answer: shorter, a slow replica would
    # look like a dead connection, and the LPUSH would be sent again.
    # Retries off, whatever the version: redis-py can send a command again by itself when its answer was lost, which
    # for LPUSH is a second message nobody asked for. 4.3 (Debian 12) does so only with retry_on_timeout=True;
    # newer versions retry by default (8.2's Redis(host=..., port=...) sent an LPUSH whose answer was lost 11 times,
    # docs/producers.md). Retry(NoBackoff(), 0) turns it off in every version; enqueue decides, once.
    read_timeout = (TIMEOUT_MS + (WAIT_TIMEOUT_MS if WAIT_REPLICAS > 0 else 0)) / 1000
    r = redis.Redis.from_url(REDIS_URL, decode_responses=True, socket_timeout=read_timeout,
                             socket_connect_timeout=TIMEOUT_MS / 1000, retry_on_timeout=False,
                             retry=Retry(NoBackoff(), 0))
    if sys.argv[1:] == ["feedback"]:
        pop_feedback(r)
    elif sys.argv[1:] in ([], ["enqueue"]):
        produce(r)
    else:
        sys.exit("usage: producer.py [enqueue|feedback]")


if __name__ == "__main__":
    main()
