#!/usr/bin/env node
// A producer for the push worker, in Node.js with Debian's node-redis (redis 4.x, promise API).
//
//   node producer.js            enqueue one chat message and one group message
//   node producer.js feedback   pop push:feedback (dead tokens) without losing an entry, then exit
//
// Debian installs node-redis under /usr/share/nodejs, which Debian's nodejs searches; another build of
// node needs NODE_PATH=/usr/share/nodejs.
//
// Configuration (environment): REDIS_URL (default redis://127.0.0.1:6379/0), PUSH_PREFIX (push),
// PUSH_SHARDS (the worker's redis.shards, comma-separated, same order; unset: one shard, PUSH_PREFIX),
// TOPIC (com.example.chat), TOKENS (comma-separated, required to enqueue), PROVIDER (apns, fcm, huawei or xiaomi),
// RECEIVER and GROUP (user-42, group-7: they choose the shard), WAIT_REPLICAS (0: no WAIT) and
// WAIT_TIMEOUT_MS (100), REDIS_TIMEOUT_MS (5000: connect, and each answer, plus WAIT_TIMEOUT_MS for a WAIT),
// FEEDBACK_CONSUMER (this consumer's stable name; default the host name).
'use strict';

const crypto = require('crypto');
const os = require('os');
const { createClient, ErrorReply } = require('redis');

const env = (name, fallback) => process.env[name] || fallback;
const list = (name) => (process.env[name] || '').split(',').filter((s) => s !== '');

const REDIS_URL = env('REDIS_URL', 'redis://127.0.0.1:6379/0');
const SHARDS = list('PUSH_SHARDS').length > 0 ? list('PUSH_SHARDS') : [env('PUSH_PREFIX', 'push')];
const TOPIC = env('TOPIC', 'com.example.chat');
const TOKENS = list('TOKENS');
const PROVIDER = env('PROVIDER', 'apns');
const WAIT_REPLICAS = Number(env('WAIT_REPLICAS', '0'));
const WAIT_TIMEOUT_MS = Number(env('WAIT_TIMEOUT_MS', '100'));
const TIMEOUT_MS = Number(env('REDIS_TIMEOUT_MS', '5000'));
const CONSUMER = env('FEEDBACK_CONSUMER', os.hostname());

// CRC-32 (IEEE), bit by bit: the hash every example uses, so that one receiver's pushes always go to one
// list whichever language pushed them. (zlib.crc32 exists from Node 20.15 and 22.2 only.)
function crc32(text) {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

// The key prefix of the receiver's shard: CRC-32 of its id, modulo the number of shards.
const shardFor = (receiver) => SHARDS[crc32(receiver) % SHARDS.length];

function message(kind, title, body, extra = {}) {
  // The payload is the provider's: APNs's {"aps": ...}; for Android, FCM's message object without its target,
  // the one shape Huawei and Xiaomi take too (the worker maps it into each vendor's request).
  const payload = PROVIDER === 'apns'
    ? { aps: { alert: { title, body } } }
    : { notification: { title, body } };
  return {
    // Yours, in every dead letter, feedback entry and log line about the message. Not a dedupe key: the
    // worker sends every element it finds, so two elements with one id are two pushes.
    id: `node-${kind}-${crypto.randomBytes(6).toString('hex')}`,
    kind,
    ...(PROVIDER !== 'apns' ? { provider: PROVIDER } : {}),
    topic: TOPIC,
    tokens: TOKENS,
    payload,
    enqueued_at: Date.now(), // UNIX ms: the worker measures queue-to-provider latency
    ...extra,
  };
}

class TimeoutError extends Error {}

// node-redis 4 bounds connecting (socket.connectTimeout) but not an answer: a Redis that stops answering would
// hold a call for ever. within() bounds one; past the bound the caller drops the connection (drop below), so
// the command can neither be answered later nor be sent late.
async function within(promise, what, ms = TIMEOUT_MS) {
  let timer;
  const expiry = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

// Closes a connection at once: whatever still waits on it (to be written, or for its answer) is failed, not sent.
async function drop(client) {
  await client.disconnect().catch(() => {});
}

// After a broken connection node-redis reconnects by itself, at once: waits until it is back or has given up
// (closed). Dropping the client while that reconnect is under way could leave its new socket open.
async function settled(client) {
  await within(new Promise((resolve) => {
    const check = () => { if (client.isReady || !client.isOpen) resolve(); };
    client.on('ready', check).on('error', check).on('end', check);
    check();
  }), 'reconnect');
}

// One connection, and the client's own retries off. node-redis never writes a command twice: a command written
// before the connection broke is failed. But by default it reconnects again and again, and commands given while
// it is disconnected wait in its offline queue and go out once it is back, possibly long after the caller gave up
// on them and pushed again, which would make a second message. disableOfflineQueue fails such a command at once,
// and a reconnect strategy that returns an error stops after the one attempt node-redis makes right after a
// break: enqueue decides about pushing again, once.
async function connect() {
  const client = createClient({
    url: REDIS_URL,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: TIMEOUT_MS,
      reconnectStrategy: () => new Error('not reconnecting: the producer decides whether to send again'),
    },
  });
  client.on('error', (err) => console.error('redis:', err.message));
  try {
    await within(client.connect(), 'connect (and AUTH)');
  } catch (err) {
    await drop(client);
    throw err;
  }
  return client;
}

// LPUSH one message onto its shard's queue: <prefix>:queue for pushes a person waits for,
// <prefix>:queue:bulk (not used here) for broadcasts and other work that may wait. Returns the connection to
// go on with (a new one if this one broke).
async function enqueue(client, receiver, msg) {
  const key = `${shardFor(receiver)}:queue`;
  const element = JSON.stringify(msg); // compact; at most collector.max_element_bytes (1 MiB by default)
  // LPUSH and WAIT in one pipeline on this connection, written together. WAIT counts the writes of its own
  // connection: sent on another one (after a reconnect between the two, say), it would wait for nothing and
  // answer "replicated" at once. If the connection breaks, node-redis fails the rest of the pipeline rather
  // than sending it on the next connection.
  const send = (c) => {
    const pipeline = c.multi().lPush(key, element);
    if (WAIT_REPLICAS > 0) pipeline.wait(WAIT_REPLICAS, WAIT_TIMEOUT_MS);
    // WAIT may take WAIT_TIMEOUT_MS to answer: that is not Redis failing to answer.
    return within(pipeline.execAsPipeline(), `LPUSH ${key}`, TIMEOUT_MS + (WAIT_REPLICAS > 0 ? WAIT_TIMEOUT_MS : 0));
  };
  let replies;
  try {
    replies = await send(client);
  } catch (err) {
    // An error reply (NOPERM, OOM, WRONGTYPE) means Redis did not apply it. Anything else (a broken
    // connection, no answer in time) leaves the LPUSH's outcome unknown: it may or may not have happened.
    // Pushing again may make a second message (the worker does not dedupe by id), not pushing may lose this
    // one; for chat a notification twice beats none, so push once more, on a new connection, and only once.
    if (err instanceof ErrorReply) throw err;
    if (err instanceof TimeoutError) {
      await drop(client); // it may still answer: never use it again
    } else {
      await settled(client);
    }
    if (!client.isReady) client = await connect();
    replies = await send(client);
  }
  if (WAIT_REPLICAS > 0) {
    // Durability. LPUSH is answered once the primary has the element in memory (and on disk first only
    // with appendfsync always). Replication is asynchronous: a failover right now would lose it. WAIT
    // blocks until that many replicas have it or the timeout passes. Fewer means "not replicated yet",
    // not "lost": do not push again (that would be a duplicate).
    const acked = replies[replies.length - 1];
    if (acked < WAIT_REPLICAS) {
      console.error(`warning: ${msg.id} reached ${acked} of ${WAIT_REPLICAS} replicas within ${WAIT_TIMEOUT_MS} ms`);
    }
  }
  console.log(`queued ${msg.id} on ${key}`);
  return client;
}

async function produce(client) {
  if (TOKENS.length === 0) throw new Error("TOKENS is empty: give the receiver's device tokens, comma-separated");
  const group = env('GROUP', 'group-7');
  // A 1:1 chat message to the receiver's devices.
  client = await enqueue(client, env('RECEIVER', 'user-42'), message('private', 'Alice', 'Are you coming?'));
  // A group message: elements with one uuid (and identical topic, headers and payload) that meet in one
  // collection window are sent as one job, each token once. The group is the receiver for the shard.
  return enqueue(client, group, message('group', 'Team', 'Lunch at noon',
    { uuid: `${group}-${crypto.randomBytes(6).toString('hex')}` }));
}

// What the backend does with a dead token: here, print it. In real life delete the token when reason is
// Unregistered (unless it was registered again after timestamp). It must be idempotent: after a crash
// between handling and LREM, the entry is handled again.
function handle(shard, entry) {
  try {
    const f = JSON.parse(entry);
    console.log(`feedback ${shard}: token=${f.token} reason=${f.reason} message_id=${f.message_id}`);
  } catch (err) {
    console.log(`feedback ${shard}: not JSON: ${JSON.stringify(entry)}`);
  }
}

// Pops every shard's feedback list without losing an entry if this process dies at any point. LMOVE moves
// the oldest entry (the worker LPUSHes, so the right end) onto this consumer's processing list atomically;
// it is LREMed from there only after it was handled. At start, whatever the processing list still holds (a
// previous run died in between) is handled first. A consumer that runs all the time would use
// client.blMove(feedback, processing, 'RIGHT', 'LEFT', timeout) instead, one loop per shard (on a
// connection of its own: a blocking command holds its connection).
async function popFeedback(client) {
  for (const shard of SHARDS) {
    const feedback = `${shard}:feedback`;
    // Same hash tag as the feedback list: LMOVE stays in one slot on Redis Cluster.
    const processing = `${shard}:feedback:processing:${CONSUMER}`;
    for (const entry of (await within(client.lRange(processing, 0, -1), 'LRANGE')).reverse()) { // oldest first
      handle(shard, entry);
      await within(client.lRem(processing, 1, entry), 'LREM');
    }
    for (;;) {
      const entry = await within(client.lMove(feedback, processing, 'RIGHT', 'LEFT'), 'LMOVE');
      if (entry === null) break;
      handle(shard, entry);
      await within(client.lRem(processing, 1, entry), 'LREM');
    }
  }
}

async function main() {
  const mode = process.argv.slice(2).join(' ');
  if (!['', 'enqueue', 'feedback'].includes(mode)) throw new Error('usage: node producer.js [enqueue|feedback]');
  if (!['apns', 'fcm', 'huawei', 'xiaomi'].includes(PROVIDER)) {
    throw new Error(`PROVIDER is ${JSON.stringify(PROVIDER)}: one of apns, fcm, huawei, xiaomi`);
  }
  let client = await connect();
  try {
    if (mode === 'feedback') await popFeedback(client);
    else client = await produce(client);
    await within(client.quit(), 'QUIT');
  } catch (err) {
    await drop(client);
    throw err;
  }
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
