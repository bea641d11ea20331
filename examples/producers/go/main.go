// A producer for the push worker, in Go with redigo (Debian's golang-github-gomodule-redigo-dev).
//
//	producer            enqueue one chat message and one group message
//	producer feedback   pop push:feedback (dead tokens) without losing an entry, then exit
//
// A Go module (go.mod, go.sum: redigo v1.8.3, the version Debian 12 packages). With a module proxy:
//
//	go build -o producer .
//
// Without one, against Debian's copy of redigo (golang-github-gomodule-redigo-dev), nothing downloaded: point
// the requirement at that copy in a go.mod of your own, here a copy beside the build (the checked-in one stays
// as it is), as scripts/test-producers.sh does:
//
//	cp go.mod /tmp/producer.mod && cp go.sum /tmp/producer.sum
//	go mod edit -replace github.com/gomodule/redigo=/usr/share/gocode/src/github.com/gomodule/redigo /tmp/producer.mod
//	GOPROXY=off GOFLAGS=-mod=mod go build -modfile=/tmp/producer.mod -o producer .
//
// Configuration (environment): REDIS_URL (default redis://127.0.0.1:6379/0), PUSH_PREFIX (push),
// PUSH_SHARDS (the worker's redis.shards, comma-separated, same order; unset: one shard, PUSH_PREFIX),
// TOPIC (com.example.chat), TOKENS (comma-separated, required to enqueue), PROVIDER (apns, fcm, huawei or xiaomi),
// RECEIVER and GROUP (user-42, group-7: they choose the shard), WAIT_REPLICAS (0: no WAIT) and
// WAIT_TIMEOUT_MS (100), REDIS_TIMEOUT_MS (5000: connect, write, and each answer, plus WAIT_TIMEOUT_MS when
// waiting), FEEDBACK_CONSUMER (this consumer's stable name; default the host name).
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func list(name string) []string {
	var out []string
	for _, s := range strings.Split(os.Getenv(name), ",") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

var (
	redisURL = env("REDIS_URL", "redis://127.0.0.1:6379/0")
	shards   = list("PUSH_SHARDS")
	topic    = env("TOPIC", "com.example.chat")
	tokens   = list("TOKENS")
	provider = env("PROVIDER", "apns")
)

// shardFor is the key prefix of the receiver's shard: CRC-32 (IEEE) of its id, modulo the number of
// shards. Every producer should hash the same way (all four examples use CRC-32), so that one receiver's
// pushes always go to one list and are taken in the order they were pushed.
func shardFor(receiver string) string {
	return shards[crc32.ChecksumIEEE([]byte(receiver))%uint32(len(shards))]
}

func randomID() string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Message is one queue element. Field names are the worker's; omitempty leaves out what is not set (a
// field the worker does not know is ignored, so a misspelled one would silently do nothing).
type Message struct {
	ID         string         `json:"id"` // yours, in every record about it; not a dedupe key
	Kind       string         `json:"kind,omitempty"`
	UUID       string         `json:"uuid,omitempty"`
	Provider   string         `json:"provider,omitempty"`
	Topic      string         `json:"topic"`
	Tokens     []string       `json:"tokens"`
	Payload    map[string]any `json:"payload"`
	EnqueuedAt int64          `json:"enqueued_at"` // UNIX ms: the worker measures queue-to-provider latency
}

func newMessage(kind, title, body string) Message {
	// The payload is the provider's: APNs's {"aps": ...}; for Android, FCM's message object without its
	// target, the one shape Huawei and Xiaomi take too (the worker maps it into each vendor's request).
	payload := map[string]any{"aps": map[string]any{"alert": map[string]string{"title": title, "body": body}}}
	m := Message{ID: "go-" + kind + "-" + randomID(), Kind: kind, Topic: topic, Tokens: tokens,
		EnqueuedAt: time.Now().UnixMilli()}
	if provider != "apns" {
		payload = map[string]any{"notification": map[string]string{"title": title, "body": body}}
	}
	if provider != "apns" {
		m.Provider = provider
	}
	m.Payload = payload
	return m
}

func dial() redis.Conn {
	// Timeouts: a Redis that stops answering fails the call instead of hanging the producer. The read timeout
	// also covers a WAIT, which may take WAIT_TIMEOUT_MS to answer: shorter, a slow replica would look like a
	// dead connection, and the LPUSH would be sent again. redigo never retries a command by itself, nor
	// reconnects (a connection that failed stays failed), so enqueue alone decides whether an LPUSH is sent
	// again, and WAIT always goes over the connection that sent the LPUSH.
	ms, _ := strconv.Atoi(env("REDIS_TIMEOUT_MS", "5000"))
	timeout := time.Duration(ms) * time.Millisecond
	read := timeout
	if n, _ := strconv.Atoi(env("WAIT_REPLICAS", "0")); n > 0 {
		wait, _ := strconv.Atoi(env("WAIT_TIMEOUT_MS", "100"))
		read += time.Duration(wait) * time.Millisecond
	}
	c, err := redis.DialURL(redisURL, redis.DialConnectTimeout(timeout),
		redis.DialReadTimeout(read), redis.DialWriteTimeout(timeout))
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis:", err)
		os.Exit(1)
	}
	return c
}

// enqueue LPUSHes one message onto its shard's queue: <prefix>:queue for pushes a person waits for,
// <prefix>:queue:bulk (not used here) for broadcasts and other work that may wait.
func enqueue(c redis.Conn, receiver string, m Message) (redis.Conn, error) {
	key := shardFor(receiver) + ":queue"
	element, err := json.Marshal(m) // compact JSON, at most collector.max_element_bytes (1 MiB by default)
	if err != nil {
		return c, err
	}
	_, err = c.Do("LPUSH", key, element)
	var replyErr redis.Error
	if err != nil && !errors.As(err, &replyErr) {
		// Not an error reply but a broken connection: the LPUSH may or may not have happened. Pushing
		// again may make a second message (the worker does not dedupe by id), not pushing may lose this
		// one; for chat a notification twice beats none, so push once more on a new connection. An error
		// reply (NOPERM, OOM, WRONGTYPE) means Redis did not apply it: it is returned as is.
		c.Close()
		c = dial()
		_, err = c.Do("LPUSH", key, element)
	}
	if err != nil {
		return c, err
	}
	if n, _ := strconv.Atoi(env("WAIT_REPLICAS", "0")); n > 0 {
		// Durability. LPUSH is answered once the primary has the element in memory (and on disk first
		// only with appendfsync always). Replication is asynchronous: a failover right now would lose it.
		// WAIT blocks until n replicas have it or the timeout passes. Fewer than n means "not replicated
		// yet", not "lost": do not push again (that would be a duplicate).
		timeout, _ := strconv.Atoi(env("WAIT_TIMEOUT_MS", "100"))
		acked, err := redis.Int(c.Do("WAIT", n, timeout))
		if err != nil {
			return c, err
		}
		if acked < n {
			fmt.Fprintf(os.Stderr, "warning: %s reached %d of %d replicas within %d ms\n", m.ID, acked, n, timeout)
		}
	}
	fmt.Printf("queued %s on %s\n", m.ID, key)
	return c, nil
}

func produce(c redis.Conn) error {
	if len(tokens) == 0 {
		return errors.New("TOKENS is empty: give the receiver's device tokens, comma-separated")
	}
	group := env("GROUP", "group-7")
	// A 1:1 chat message to the receiver's devices.
	c, err := enqueue(c, env("RECEIVER", "user-42"), newMessage("private", "Alice", "Are you coming?"))
	if err != nil {
		return err
	}
	// A group message: elements with one uuid (and identical topic, headers and payload) that meet in one
	// collection window are sent as one job, each token once. The group is the receiver for the shard.
	m := newMessage("group", "Team", "Lunch at noon")
	m.UUID = group + "-" + randomID()
	c, err = enqueue(c, group, m)
	c.Close()
	return err
}

// handle is what the backend does with a dead token: here, print it. In real life delete the token when
// reason is Unregistered (unless it was registered again after timestamp). It must be idempotent: after a
// crash between handling and LREM, the entry is handled again.
func handle(shard, entry string) {
	var f struct {
		Token, Reason string
		MessageID     string `json:"message_id"`
	}
	if err := json.Unmarshal([]byte(entry), &f); err != nil {
		fmt.Printf("feedback %s: not JSON: %q\n", shard, entry)
		return
	}
	fmt.Printf("feedback %s: token=%s reason=%s message_id=%s\n", shard, f.Token, f.Reason, f.MessageID)
}

// popFeedback pops every shard's feedback list without losing an entry if this process dies at any point.
// LMOVE moves the oldest entry (the worker LPUSHes, so the right end) onto this consumer's processing list
// atomically; it is LREMed from there only after it was handled. At start, whatever the processing list
// still holds (a previous run died in between) is handled first. A consumer that runs all the time would
// use BLMOVE feedback processing RIGHT LEFT <timeout> instead, one loop per shard.
func popFeedback(c redis.Conn) error {
	host, _ := os.Hostname()
	consumer := env("FEEDBACK_CONSUMER", host)
	for _, shard := range shards {
		feedback := shard + ":feedback"
		// Same hash tag as the feedback list: LMOVE stays in one slot on Redis Cluster.
		processing := shard + ":feedback:processing:" + consumer
		leftovers, err := redis.Strings(c.Do("LRANGE", processing, 0, -1))
		if err != nil {
			return err
		}
		for i := len(leftovers) - 1; i >= 0; i-- { // oldest first
			handle(shard, leftovers[i])
			if _, err := c.Do("LREM", processing, 1, leftovers[i]); err != nil {
				return err
			}
		}
		for {
			entry, err := redis.String(c.Do("LMOVE", feedback, processing, "RIGHT", "LEFT"))
			if err == redis.ErrNil {
				break
			} else if err != nil {
				return err
			}
			handle(shard, entry)
			if _, err := c.Do("LREM", processing, 1, entry); err != nil {
				return err
			}
		}
	}
	return nil
}

func main() {
	switch provider {
	case "apns", "fcm", "huawei", "xiaomi":
	default:
		fmt.Fprintf(os.Stderr, "PROVIDER is %q: one of apns, fcm, huawei, xiaomi\n", provider)
		os.Exit(2)
	}
	if len(shards) == 0 {
		shards = []string{env("PUSH_PREFIX", "push")}
	}
	c := dial()
	var err error
	switch strings.Join(os.Args[1:], " ") {
	case "", "enqueue":
		err = produce(c)
	case "feedback":
		err = popFeedback(c)
		c.Close()
	default:
		err = errors.New("usage: producer [enqueue|feedback]")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
