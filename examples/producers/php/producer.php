<?php
// A producer for the push worker, in PHP with Debian's php-redis (phpredis 5.3).
//
//   php producer.php            enqueue one chat message and one group message
//   php producer.php feedback   pop push:feedback (dead tokens) without losing an entry, then exit
//
// Configuration (environment): REDIS_URL (default redis://127.0.0.1:6379/0), PUSH_PREFIX (push),
// PUSH_SHARDS (the worker's redis.shards, comma-separated, same order; unset: one shard, PUSH_PREFIX),
// TOPIC (com.example.chat), TOKENS (comma-separated, required to enqueue), PROVIDER (apns, fcm, huawei or xiaomi),
// RECEIVER and GROUP (user-42, group-7: they choose the shard), WAIT_REPLICAS (0: no WAIT) and
// WAIT_TIMEOUT_MS (100), REDIS_TIMEOUT_MS (5000: connect, and each answer, plus WAIT_TIMEOUT_MS when waiting),
// FEEDBACK_CONSUMER (this consumer's stable name; default the host name).
//
// The Redis user needs +echo besides the commands it sends (docs/producers.md, ACL): phpredis checks a persistent
// connection with ECHO before it hands it out again.

declare(strict_types=1);

function env(string $name, string $default): string
{
    $value = getenv($name);
    return ($value === false || $value === '') ? $default : $value;
}

function envList(string $name): array
{
    return array_values(array_filter(explode(',', env($name, '')), fn ($s) => $s !== ''));
}

$shards = envList('PUSH_SHARDS') ?: [env('PUSH_PREFIX', 'push')];

// A connection to Redis, as each web request would take one. pconnect: the connection outlives the request (the
// PHP process keeps it in phpredis's pool, per host and port), and the next request of the same php-fpm or
// mod_php process gets it back instead of connecting and authenticating again. Before handing a pooled connection
// out, phpredis sends AUTH and an ECHO on it and reads the answers; a connection that fails that check (closed by
// the server, or holding an answer nobody read) is closed and a new one opened. So a connection left with an unread
// answer is never used for the next command.
// phpredis takes host and port, not a URL: redis[s]://[user:password@]host:port/db.
function connectRedis(): Redis
{
    $url = parse_url(env('REDIS_URL', 'redis://127.0.0.1:6379/0'));
    $host = (($url['scheme'] ?? 'redis') === 'rediss' ? 'tls://' : '') . ($url['host'] ?? '127.0.0.1');
    // Timeouts: connecting, and reading each answer. A Redis that stops answering fails the call (RedisException)
    // instead of holding the request. A WAIT may take WAIT_TIMEOUT_MS to answer: that is not a silent Redis.
    $timeout = (float) env('REDIS_TIMEOUT_MS', '5000') / 1000;
    $readTimeout = $timeout + ((int) env('WAIT_REPLICAS', '0') > 0 ? (float) env('WAIT_TIMEOUT_MS', '100') / 1000 : 0.0);
    $options = [];
    if (isset($url['pass'])) {
        // Given to pconnect rather than sent with auth() after it: phpredis then authenticates when it opens the
        // connection and in the check of a pooled one, with no extra round trip per request. [user, password]
        // for an ACL user (Redis 6+); a password alone authenticates as "default".
        $options['auth'] = isset($url['user']) && $url['user'] !== ''
            ? [rawurldecode($url['user']), rawurldecode($url['pass'])] : rawurldecode($url['pass']);
    }
    $redis = new Redis();
    // host, port, connect timeout, persistent id (null: the pool of this host and port), retry interval (ms),
    // read timeout, options.
    if (!$redis->pconnect($host, (int) ($url['port'] ?? 6379), $timeout, null, 0, $readTimeout, $options)) {
        throw new RedisException('cannot connect to ' . $host . ': ' . ($redis->getLastError() ?? 'no reason given'));
    }
    // Retries off. phpredis never sends a command twice by itself, but by default (10 retries) it reconnects
    // when it finds the connection closed before it writes a command or reads an answer: a WAIT would then go out
    // on a new connection that carried no LPUSH, and answer "replicated" for nothing, and an answer would be
    // awaited on a connection that never got the command. With 0 the call fails at once, and enqueue decides.
    $redis->setOption(Redis::OPT_MAX_RETRIES, 0);
    // A pooled connection keeps the database it had: select it every time when it is not 0 (the ACL user then
    // needs +select; every user of the pool must agree on the database otherwise).
    $db = (int) ltrim($url['path'] ?? '', '/');
    if ($db !== 0 && !$redis->select($db)) {
        throw new RuntimeException("SELECT $db: " . $redis->getLastError());
    }
    return $redis;
}

// The key prefix of the receiver's shard: CRC-32 of its id, modulo the number of shards. Every producer
// should hash the same way (all four examples use CRC-32), so that one receiver's pushes always go to one
// list and are taken in the order they were pushed.
function shardFor(array $shards, string $receiver): string
{
    return $shards[crc32($receiver) % count($shards)];
}

function message(string $kind, string $title, string $body, array $extra = []): array
{
    $provider = env('PROVIDER', 'apns');
    $message = [
        // Yours, in every dead letter, feedback entry and log line about the message. Not a dedupe key:
        // the worker sends every element it finds, so two elements with one id are two pushes.
        'id' => "php-$kind-" . bin2hex(random_bytes(6)),
        'kind' => $kind,
        'topic' => env('TOPIC', 'com.example.chat'),
        'tokens' => envList('TOKENS'),
        // The provider's payload: APNs's {"aps": ...}; for Android, FCM's message object without its target,
        // the one shape Huawei and Xiaomi take too (the worker maps it into each vendor's request).
        'payload' => $provider === 'apns'
            ? ['aps' => ['alert' => ['title' => $title, 'body' => $body]]]
            : ['notification' => ['title' => $title, 'body' => $body]],
        'enqueued_at' => (int) floor(microtime(true) * 1000), // UNIX ms: queue-to-provider latency
    ];
    if ($provider !== 'apns') {
        $message['provider'] = $provider;
    }
    return $message + $extra;
}

// LPUSH one message onto its shard's queue: <prefix>:queue for pushes a person waits for,
// <prefix>:queue:bulk (not used here) for broadcasts and other work that may wait.
function enqueue(Redis &$redis, array $shards, string $receiver, array $message): void
{
    $key = shardFor($shards, $receiver) . ':queue';
    // Compact JSON, the strings as they are; at most collector.max_element_bytes (1 MiB by default).
    $element = json_encode($message, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR);
    try {
        $pushed = $redis->lPush($key, $element);
    } catch (RedisException $e) {
        // The connection broke, or no answer came in time: the LPUSH may or may not have happened. Pushing
        // again may make a second message (the worker does not dedupe by id), not pushing may lose this one;
        // for chat a notification twice beats none, so push once more on a new connection, and only once.
        // (phpredis closed the broken connection: it does not go back to the pool.)
        $redis = connectRedis();
        $pushed = $redis->lPush($key, $element);
    }
    if ($pushed === false) {
        // An error reply (NOPERM, OOM, WRONGTYPE): Redis did not apply it.
        throw new RuntimeException("LPUSH $key: " . $redis->getLastError());
    }
    $replicas = (int) env('WAIT_REPLICAS', '0');
    if ($replicas > 0) {
        // Durability. LPUSH is answered once the primary has the element in memory (and on disk first
        // only with appendfsync always). Replication is asynchronous: a failover right now would lose it.
        // WAIT blocks until that many replicas have it or the timeout passes. Fewer means "not replicated
        // yet", not "lost": do not push again (that would be a duplicate). WAIT counts the writes of its own
        // connection: this one, which sent the LPUSH (phpredis does not reconnect between the two, see
        // connectRedis).
        $timeout = (int) env('WAIT_TIMEOUT_MS', '100');
        $acked = $redis->wait($replicas, $timeout);
        if ($acked === false) {
            throw new RuntimeException('WAIT: ' . $redis->getLastError());
        }
        if ($acked < $replicas) {
            fwrite(STDERR, "warning: {$message['id']} reached $acked of $replicas replicas within $timeout ms\n");
        }
    }
    echo "queued {$message['id']} on $key\n";
}

// Each message is sent as a web request would send it: with a connection from connectRedis(), let go at the
// end (the object goes away; the connection goes back to phpredis's pool, still open). The second message gets
// the same connection back: both go over one connection, opened and authenticated once.
function produce(array $shards): void
{
    if (envList('TOKENS') === []) {
        throw new RuntimeException("TOKENS is empty: give the receiver's device tokens, comma-separated");
    }
    $group = env('GROUP', 'group-7');
    // A 1:1 chat message to the receiver's devices.
    $redis = connectRedis();
    enqueue($redis, $shards, env('RECEIVER', 'user-42'), message('private', 'Alice', 'Are you coming?'));
    $redis = null; // the end of a request
    // A group message: elements with one uuid (and identical topic, headers and payload) that meet in one
    // collection window are sent as one job, each token once. The group is the receiver for the shard.
    $redis = connectRedis();
    enqueue($redis, $shards, $group,
        message('group', 'Team', 'Lunch at noon', ['uuid' => "$group-" . bin2hex(random_bytes(6))]));
}

// What the backend does with a dead token: here, print it. In real life delete the token when reason is
// Unregistered (unless it was registered again after timestamp). It must be idempotent: after a crash
// between handling and LREM, the entry is handled again.
function handle(string $shard, string $entry): void
{
    $f = json_decode($entry, true);
    if (!is_array($f)) {
        echo "feedback $shard: not JSON: " . json_encode($entry) . "\n";
        return;
    }
    $field = fn (string $name) => $f[$name] ?? '';
    echo "feedback $shard: token={$field('token')} reason={$field('reason')} message_id={$field('message_id')}\n";
}

// LREM, checked. phpredis 5 takes (key, value, count): the count comes last.
function removeHandled(Redis $redis, string $processing, string $entry): void
{
    if ($redis->lRem($processing, $entry, 1) === false) {
        throw new RuntimeException("LREM $processing: " . $redis->getLastError());
    }
}

// Pops every shard's feedback list without losing an entry if this process dies at any point. LMOVE moves
// the oldest entry (the worker LPUSHes, so the right end) onto this consumer's processing list atomically;
// it is LREMed from there only after it was handled. At start, whatever the processing list still holds (a
// previous run died in between) is handled first. A consumer that runs all the time would use
// BLMOVE feedback processing RIGHT LEFT <timeout> instead, one loop per shard.
function popFeedback(Redis $redis, array $shards): void
{
    $consumer = env('FEEDBACK_CONSUMER', gethostname());
    foreach ($shards as $shard) {
        $feedback = "$shard:feedback";
        // Same hash tag as the feedback list: LMOVE stays in one slot on Redis Cluster.
        $processing = "$shard:feedback:processing:$consumer";
        $leftovers = $redis->lRange($processing, 0, -1);
        if ($leftovers === false) {
            throw new RuntimeException("LRANGE $processing: " . $redis->getLastError());
        }
        foreach (array_reverse($leftovers) as $entry) { // oldest first
            handle($shard, $entry);
            removeHandled($redis, $processing, $entry);
        }
        for (;;) {
            // phpredis 5.3 has no lMove method: rawCommand sends it as is. It returns false both for an
            // empty list (nil) and for an error reply, which sets the last error.
            $redis->clearLastError();
            $entry = $redis->rawCommand('LMOVE', $feedback, $processing, 'RIGHT', 'LEFT');
            if ($entry === false) {
                if ($redis->getLastError() !== null) {
                    throw new RuntimeException("LMOVE $feedback: " . $redis->getLastError());
                }
                break;
            }
            handle($shard, $entry);
            removeHandled($redis, $processing, $entry);
        }
    }
}

$mode = implode(' ', array_slice($argv, 1));
try {
    if (!in_array(env('PROVIDER', 'apns'), ['apns', 'fcm', 'huawei', 'xiaomi'], true)) {
        throw new RuntimeException('PROVIDER is ' . json_encode(env('PROVIDER', 'apns')) . ': one of apns, fcm, huawei, xiaomi');
    }
    if ($mode === 'feedback') {
        popFeedback(connectRedis(), $shards);
    } elseif ($mode === '' || $mode === 'enqueue') {
        produce($shards);
    } else {
        throw new RuntimeException('usage: php producer.php [enqueue|feedback]');
    }
} catch (Throwable $e) {
    fwrite(STDERR, $e->getMessage() . "\n");
    exit(1);
}
