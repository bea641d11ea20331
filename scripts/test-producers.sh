#!/usr/bin/env bash
# Runs the example producers of examples/producers (Python, Go, Node.js, PHP) against a real pipeline and
# checks what they promise: usage: scripts/test-producers.sh WORKER_BIN EMULATOR_BIN
#
# It starts its own redis-server (AOF, appendfsync always) with one replica, the emulator (APNs and FCM over
# HTTP/2 + TLS, Huawei and Xiaomi on its vendor port) and two workers, all on free loopback ports: one worker on
# the prefix `push`, one on the shards push:{0} and push:{1}. The producers connect as the ACL user of
# docs/producers.md (the lines are read from that file). For each language it checks:
#   - both messages (private and group), APNs and FCM, reached the emulator: its record files hold each good
#     token with each message's body;
#   - both messages, Huawei and Xiaomi, reached the emulator's vendor side: its stats count each good token
#     delivered twice in the chat class (Huawei category IM, Xiaomi's private channel) and the dead token refused;
#   - WAIT 1 after each LPUSH was answered by the replica (no warning);
#   - the worker wrote the feedback of the token the emulator answers Unregistered (each of the four providers),
#     and `producer feedback`
#     handled it and left push:feedback and its processing list empty; an entry left in its processing
#     list by a "crashed" run is handled too;
#   - with shards, each message went to the shard that CRC-32 of its receiver picks, and was delivered, and
#     the feedback of every shard was popped.
# Then: nothing left in the queues, the processing hashes or the dead letters; the ACL refused nothing the
# producers did, and refuses what a producer must not do. Last, against a Redis of their own (a proxy in between
# for the faults): each producer sends both messages, LPUSH and WAIT each, over one connection (PHP: its persistent
# connection, handed back for the second); pushes once more, and goes on, when a connection breaks before an
# LPUSH's answer; pushes once more and then fails when no answer comes, its client library never sending anything
# again by itself; and fails within its timeouts against a Redis that never answers. Every producer run is bounded
# (120 s). Ends with `producers: N passed, M failed`.
set -uo pipefail
if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: $0 WORKER_BIN EMULATOR_BIN" >&2
  exit 2
fi
worker="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
emulator="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
root="$(cd "$(dirname "$0")/.." && pwd)"
ex="$root/examples/producers"
start=$SECONDS

# The Debian packages the producers use come from `scripts/install-deps.sh --tests` (the test command runs it
# first); this script installs nothing and never touches the host's services.
for command in redis-server go node php /usr/bin/python3; do
  command -v "$command" >/dev/null || { echo "test-producers: $command is missing: run scripts/install-deps.sh --tests" >&2; exit 2; }
done
py=/usr/bin/python3   # Debian's python3: the one python3-redis is installed for

run="$(mktemp -d -t push-producers-XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null; done
  if [ "${failed_total:-1}" = "0" ]; then rm -rf "$run"; else echo "files of this run: $run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
die() {  # a service did not start: nothing else can be checked
  bad "$1"; cat "$2"
  echo "producers: $passed passed, $failed failed"
  exit 1
}
# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds, at most SECONDS.
wait_for() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.2; done
}
free_port() { $py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
redis_port=$(free_port); replica_port=$(free_port); apns_port=$(free_port); fcm_port=$(free_port); vendor_port=$(free_port)
metrics_a=$(free_port); metrics_b=$(free_port)
q() { redis-cli -p "$redis_port" "$@"; }

# --- Redis: a primary that fsyncs every write, and one replica for WAIT
mkdir -p "$run/primary" "$run/replica"
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$run/primary" --save "" --appendonly yes \
  --appendfsync always >"$run/redis.log" 2>&1 &
pids+=($!)
wait_for 10 q PING >/dev/null 2>&1 || die "redis-server starts" "$run/redis.log"
redis-server --port "$replica_port" --bind 127.0.0.1 --dir "$run/replica" --save "" --appendonly no \
  --replicaof 127.0.0.1 "$redis_port" >"$run/replica.log" 2>&1 &
pids+=($!)

# --- The emulator, as scripts/demo.sh starts it: a P-256 key for APNs JWTs, a service account for FCM
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$run/AuthKey_PROD000001.p8" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$run/fcm-key.pem" 2>/dev/null
$py - "$run" "$apns_port" <<'PY'
import json, sys
run, port = sys.argv[1], sys.argv[2]
json.dump({"type": "service_account", "project_id": "producers-test", "private_key_id": "prod0000000000000000000000000000000001",
           "private_key": open(run + "/fcm-key.pem").read(), "client_email": "push-test@producers-test.iam.gserviceaccount.com",
           "client_id": "1", "token_uri": "https://127.0.0.1:%s/token" % port}, open(run + "/fcm-service-account.json", "w"))
PY
# China's vendors, as scripts/demo.sh sets them up: a Huawei Android app's OAuth client secret (Push Kit v1: base64
# characters, as AppGallery Connect issues them) and a Xiaomi AppSecret, each in a file; the emulator answers tokens
# starting with "unregistered" as dead (Huawei noRight, Xiaomi bad_regids).
openssl rand -base64 32 >"$run/huawei-secret.txt"
openssl rand -base64 24 >"$run/xiaomi-secret.txt"
chmod 600 "$run/AuthKey_PROD000001.p8" "$run/fcm-key.pem" "$run/fcm-service-account.json" "$run"/*-secret.txt
"$emulator" --port "$apns_port" --write-ca "$run/ca.pem" --provider-key "PROD000001:PROD000001:$run/AuthKey_PROD000001.p8" \
  --answer "410a=410:Unregistered@1700000000000" --record "$run/apns-delivered.jsonl" \
  --fcm-service-account "$run/fcm-service-account.json" --fcm-port "$fcm_port" --fcm-record "$run/fcm-delivered.jsonl" \
  --vendor-port "$vendor_port" --huawei-app "104000001:$run/huawei-secret.txt" \
  --xiaomi-app "$run/xiaomi-secret.txt:com.example.chat::im-private" \
  >"$run/emulator.log" 2>&1 &
pids+=($!)
emulator_up() { grep -q "fcm listening" "$run/emulator.log" && grep -q "vendor listening" "$run/emulator.log"; }
wait_for 20 emulator_up || die "the emulator starts" "$run/emulator.log"

# --- Two workers: one on the prefix push, one on two shards
write_config() {  # FILE METRICS_PORT REDIS_LINES
  cat >"$1" <<YAML
redis:
  url: redis://127.0.0.1:$redis_port/0
$3
apns:
  endpoint: https://127.0.0.1:$apns_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      team_id: PROD000001
      key_id: PROD000001
      key_file: $run/AuthKey_PROD000001.p8
fcm:
  endpoint: https://127.0.0.1:$fcm_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      service_account_file: $run/fcm-service-account.json
huawei:
  endpoint: https://127.0.0.1:$vendor_port
  token_uri: https://127.0.0.1:$vendor_port/oauth2/v3/token
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      api: v1
      app_id: "104000001"
      client_secret_file: $run/huawei-secret.txt
      category: IM
xiaomi:
  endpoint: https://127.0.0.1:$vendor_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      package: com.example.chat
      app_secret_file: $run/xiaomi-secret.txt
      channel_id: im-private
retry:
  max_attempts: 3
  base_delay_ms: 50
metrics:
  listen: 127.0.0.1:$2
YAML
}
write_config "$run/worker-a.yaml" "$metrics_a" "  prefix: push"
write_config "$run/worker-b.yaml" "$metrics_b" '  shards: ["push:{0}", "push:{1}"]'
"$worker" run --config "$run/worker-a.yaml" >"$run/worker-a.log" 2>&1 &
pids+=($!); worker_a=$!
"$worker" run --config "$run/worker-b.yaml" >"$run/worker-b.log" 2>&1 &
pids+=($!); worker_b=$!
ready() { curl -sf "http://127.0.0.1:$1/readyz" >/dev/null; }
check "worker on prefix push is ready" wait_for 60 ready "$metrics_a"
check "worker on shards push:{0},push:{1} is ready" wait_for 60 ready "$metrics_b"
replica_up() { redis-cli -p "$replica_port" INFO replication | grep -q 'master_link_status:up'; }
check "the replica is in sync" wait_for 60 replica_up

# --- The producers' ACL user, exactly as docs/producers.md gives it
password="pw-$RANDOM$RANDOM"
acl_line() {  # the line of docs/producers.md starting with $1, its password replaced
  grep -F -m1 "$1" "$root/docs/producers.md" | sed "s/>PASSWORD/>$password/"
}
acl_plain="$(acl_line 'ACL SETUSER producer reset on >PASSWORD ~push:feedback ')"
acl_shards="$(acl_line 'ACL SETUSER producer reset on >PASSWORD ~push:{*}:feedback ')"
set_acl() { [ -n "$1" ] && [ "$(printf '%s\n' "$1" | q)" = "OK" ]; }
check "docs/producers.md's ACL line (prefix push) is accepted by redis-server" set_acl "$acl_plain"
q ACL LOG RESET >/dev/null
export REDIS_URL="redis://producer:$password@127.0.0.1:$redis_port/0" TOPIC=com.example.chat

# --- Build the Go producer, a module, against Debian's redigo: nothing downloaded (no Go proxy is reachable here).
# The module's go.mod and go.sum are copied into the run's directory and the copy's requirement is pointed at the
# directory the Debian package installed (asked of dpkg, not assumed), so the checked-in files stay what a user
# with a module proxy builds. GOMODCACHE in the run's directory: the build leaves nothing in the home directory.
redigo_mod="$(dpkg -L golang-github-gomodule-redigo-dev 2>/dev/null | grep -m1 '/github.com/gomodule/redigo/go.mod$' || true)"
cp "$ex/go/go.mod" "$run/go-producer.mod" && cp "$ex/go/go.sum" "$run/go-producer.sum"
if [ -n "$redigo_mod" ] && (cd "$ex/go" &&
    export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOMODCACHE="$run/go-modcache" GOWORK=off &&
    go mod edit -replace "github.com/gomodule/redigo=${redigo_mod%/go.mod}" "$run/go-producer.mod" &&
    go build -modfile="$run/go-producer.mod" -o "$run/go-producer" .) >"$run/go-build.log" 2>&1; then
  ok "go: the producer module builds against Debian's redigo (${redigo_mod%/go.mod})"
else
  bad "go: the producer module builds against Debian's redigo (${redigo_mod:-golang-github-gomodule-redigo-dev has no go.mod})"
  cat "$run/go-build.log"
fi

producer() {  # LANG ARGS...: runs that language's producer; its exit status, or 124 if it was still running after
  local lang="$1" child deadline=$((SECONDS + 120)); shift   # 120 s (then it is killed: a producer must not hang)
  case "$lang" in
    python) "$py" "$ex/python/producer.py" "$@" & ;;
    go) "$run/go-producer" "$@" & ;;
    node) NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}" node "$ex/node/producer.js" "$@" & ;;
    php) php "$ex/php/producer.php" "$@" & ;;
  esac
  child=$!
  while kill -0 "$child" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      kill -9 "$child" 2>/dev/null; wait "$child" 2>/dev/null
      echo "test-producers: the $lang producer still ran after 120 s: killed" >&2
      return 124
    fi
    sleep 0.05
  done
  wait "$child"
}
tok() { printf '%s%0*x' "$1" $((64 - ${#1})) "$2"; }   # 64 hex digits; the emulator answers 410a... Unregistered
ftok() { printf '%s%dZq7:APA91b%s' "$1" "$2" "$(printf 'Xk_9-%.0s' $(seq 24))"; }   # FCM; unregistered...: UNREGISTERED
vtok() { printf '%s%d-IQAAAACy0kYhAAB%08dXk/9+Zq7==' "$1" "$2" "$2"; }   # Huawei and Xiaomi; unregistered...: dead
# vendor_stats PROVIDER DELIVERED DISTINCT CLASS: the emulator's stats of that vendor are exactly these: DELIVERED
# deliveries (one per token and message) to DISTINCT tokens, all in the chat class CLASS, and DELIVERED dead tokens
# refused (each message carries one good token and one dead one). Exact, so a message sent twice shows.
vendor_stats() {
  curl -sf --cacert "$run/ca.pem" "https://127.0.0.1:$vendor_port/_emulator/$1/stats" | "$py" -c '
import json, sys
s = json.load(sys.stdin); delivered, distinct, klass = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ok = (s["delivered"], s["distinct_tokens"], s["by_classification"].get(klass, 0), s["refused_tokens"]) == (delivered, distinct, delivered, delivered)
sys.exit(0 if ok else 1)' "$2" "$3" "$4"
}
cat >"$run/delivered.py" <<'PY'
# delivered.py PROVIDER RECORD_FILE TOKEN BODY: exit 0 if the emulator recorded a notification with that body
import json, sys
provider, path, token, body = sys.argv[1:5]
try:
    lines = open(path, encoding="utf-8").read().splitlines()
except FileNotFoundError:
    sys.exit(1)
for line in lines:
    try:
        record = json.loads(line)
    except ValueError:
        continue  # a line still being written
    if record.get("token") != token:
        continue
    if provider == "apns":
        got = record["payload"]["aps"]["alert"]["body"]
    else:
        got = record["request"]["message"]["notification"]["body"]
    if got == body:
        sys.exit(0)
sys.exit(1)
PY
delivered() {  # PROVIDER TOKEN: both messages (private and group) reached the emulator for TOKEN
  local record="$run/apns-delivered.jsonl"
  [ "$1" = fcm ] && record="$run/fcm-delivered.jsonl"
  "$py" "$run/delivered.py" "$1" "$record" "$2" "Are you coming?" && "$py" "$run/delivered.py" "$1" "$record" "$2" "Lunch at noon"
}
count_in() {  # PATTERN KEYS...: how many entries of these lists contain PATTERN
  local key n=0
  for key in "${@:2}"; do n=$((n + $(q LRANGE "$key" 0 -1 | grep -cF -- "$1"))); done
  echo "$n"
}
all_empty() { local key; for key in "$@"; do [ "$(q LLEN "$key")" = 0 ] || return 1; done; }
at_least() { [ "$(count_in "$2" "${@:3}")" -ge "$1" ]; }
enqueued_ok() {  # OUT_FILE ERR_FILE EXIT_CODE EXPECTED_KEYS...: exit 0, two messages queued on those keys, no warning
  local out="$1" err="$2" rc="$3"; shift 3
  [ "$rc" = 0 ] || return 1
  ! grep -q 'warning' "$err" || return 1
  [ "$(grep -c '^queued ' "$out")" = 2 ] || return 1
  [ "$(sed -n 's/^queued .* on //p' "$out" | tr '\n' ' ')" = "$* " ]
}
feedback_ok() {  # OUT EXIT_CODE LEFTOVER_TOKEN TOKEN[|REASON]...: the leftover and each token's two entries (of that
  local out="$1" rc="$2" leftover="$3" t; shift 3   # reason, Unregistered if none is given) were handled
  [ "$rc" = 0 ] && grep -qF "token=$leftover reason=Unregistered message_id=crashed-run" "$out" || return 1
  for t in "$@"; do
    [[ "$t" == *"|"* ]] || t="$t|Unregistered"
    [ "$(grep -cF "token=${t%|*} reason=${t##*|}" "$out")" -ge 2 ] || return 1
  done
}
seed_leftover() {  # KEY TOKEN: an entry a crashed consumer had moved to its processing list and not handled
  q LPUSH "$1" "{\"token\":\"$2\",\"topic\":\"com.example.chat\",\"reason\":\"Unregistered\",\"timestamp\":1700000000000,\"message_id\":\"crashed-run\"}" >/dev/null
}

langs=(python go node php)
# --- Phase 1: the prefix push; APNs, FCM, Huawei and Xiaomi; WAIT 1 after each LPUSH (the replica answers)
i=0
for lang in "${langs[@]}"; do
  i=$((i + 1))
  good=$(tok a1 $((100 + i))); dead=$(tok 410a $((100 + i)))
  fgood=$(ftok d $((100 + i))); fdead=$(ftok unregistered $((100 + i)))
  hgood=$(vtok hw $((100 + i))); hdead=$(vtok unregistered-hw $((100 + i)))
  xgood=$(vtok mi $((100 + i))); xdead=$(vtok unregistered-mi $((100 + i)))
  WAIT_REPLICAS=1 WAIT_TIMEOUT_MS=5000 PROVIDER=apns TOKENS="$good,$dead" producer "$lang" >"$run/$lang-apns.out" 2>"$run/$lang-apns.err"
  rc=$?
  check "$lang: APNs messages queued on push:queue, WAIT 1 answered by the replica" \
    enqueued_ok "$run/$lang-apns.out" "$run/$lang-apns.err" "$rc" push:queue push:queue
  WAIT_REPLICAS=1 WAIT_TIMEOUT_MS=5000 PROVIDER=fcm TOKENS="$fgood,$fdead" producer "$lang" >"$run/$lang-fcm.out" 2>"$run/$lang-fcm.err"
  rc=$?
  check "$lang: FCM messages queued on push:queue, WAIT 1 answered by the replica" \
    enqueued_ok "$run/$lang-fcm.out" "$run/$lang-fcm.err" "$rc" push:queue push:queue
  # Huawei and Xiaomi: the payload is FCM's shape, "provider" names the vendor (docs/vendors.md)
  WAIT_REPLICAS=1 WAIT_TIMEOUT_MS=5000 PROVIDER=huawei TOKENS="$hgood,$hdead" producer "$lang" >"$run/$lang-huawei.out" 2>"$run/$lang-huawei.err"
  rc=$?
  check "$lang: Huawei messages queued on push:queue, WAIT 1 answered by the replica" \
    enqueued_ok "$run/$lang-huawei.out" "$run/$lang-huawei.err" "$rc" push:queue push:queue
  WAIT_REPLICAS=1 WAIT_TIMEOUT_MS=5000 PROVIDER=xiaomi TOKENS="$xgood,$xdead" producer "$lang" >"$run/$lang-xiaomi.out" 2>"$run/$lang-xiaomi.err"
  rc=$?
  check "$lang: Xiaomi messages queued on push:queue, WAIT 1 answered by the replica" \
    enqueued_ok "$run/$lang-xiaomi.out" "$run/$lang-xiaomi.err" "$rc" push:queue push:queue
  check "$lang: APNs: the private and the group message reached the emulator" wait_for 60 delivered apns "$good"
  check "$lang: FCM: the private and the group message reached the emulator" wait_for 60 delivered fcm "$fgood"
  check "$lang: Huawei: both messages delivered once each, in the chat class (IM), the dead token refused" \
    wait_for 60 vendor_stats huawei $((2 * i)) "$i" IM
  check "$lang: Xiaomi: both messages delivered once each, on the private channel, the dead token refused" \
    wait_for 60 vendor_stats xiaomi $((2 * i)) "$i" im-private
  check "$lang: the worker wrote feedback for the dead tokens (APNs, FCM, Huawei, Xiaomi, 2 each)" \
    wait_for 60 eval 'at_least 2 "$dead" push:feedback && at_least 2 "$fdead" push:feedback &&
      at_least 2 "$hdead" push:feedback && at_least 2 "$xdead" push:feedback'
  seed_leftover "push:feedback:processing:$lang-consumer" "leftover-$lang"
  FEEDBACK_CONSUMER="$lang-consumer" producer "$lang" feedback >"$run/$lang-feedback.out" 2>&1
  rc=$?
  # Huawei v1 lists a dead token among illegal_tokens, which the worker reports as BadDeviceToken (docs/vendors.md).
  check "$lang: feedback popped: the crashed run's leftover and every dead token's entries handled" \
    feedback_ok "$run/$lang-feedback.out" "$rc" "leftover-$lang" "$dead" "$fdead" "$hdead|BadDeviceToken" "$xdead"
  check "$lang: push:feedback and the consumer's processing list are empty" \
    all_empty push:feedback "push:feedback:processing:$lang-consumer"
done

# A bulk message, pushed by the producer user as a broadcast would be: the ACL lets it, the worker sends it.
bulk_token=$(tok a1 999)
bulk_reply=$(redis-cli --no-auth-warning -u "$REDIS_URL" LPUSH push:queue:bulk \
  "{\"id\":\"bulk-1\",\"topic\":\"com.example.chat\",\"tokens\":[\"$bulk_token\"],\"payload\":{\"aps\":{\"alert\":{\"body\":\"Lunch at noon\"}}}}")
bulk_delivered() { "$py" "$run/delivered.py" apns "$run/apns-delivered.jsonl" "$bulk_token" "Lunch at noon"; }
check "bulk: the producer user may LPUSH push:queue:bulk, and it is delivered" \
  eval '[[ "$bulk_reply" =~ ^[0-9]+$ ]] && wait_for 60 bulk_delivered'

# --- Phase 2: shards push:{0} and push:{1}; each receiver's shard is CRC-32 of its name modulo 2; WAIT 1 again
check "docs/producers.md's ACL line (shards push:{N}) is accepted by redis-server" set_acl "$acl_shards"
shard_names() {  # LANG: a receiver whose shard is 0 and a group whose shard is 1
  "$py" - "$1" <<'PY'
import sys, zlib
def first(name, shard):
    return next(n for n in ("%s-%d" % (name, k) for k in range(1000)) if zlib.crc32(n.encode()) % 2 == shard)
lang = sys.argv[1]
print(first(lang + "-user", 0), first(lang + "-group", 1))
PY
}
shard_keys=("push:{0}:feedback" "push:{1}:feedback")
i=0
for lang in "${langs[@]}"; do
  i=$((i + 1))
  good=$(tok a1 $((200 + i))); dead=$(tok 410a $((200 + i)))
  read -r receiver group < <(shard_names "$lang")
  PUSH_SHARDS='push:{0},push:{1}' RECEIVER="$receiver" GROUP="$group" WAIT_REPLICAS=1 WAIT_TIMEOUT_MS=5000 \
    PROVIDER=apns TOKENS="$good,$dead" producer "$lang" >"$run/$lang-shards.out" 2>"$run/$lang-shards.err"
  rc=$?
  check "$lang: shards: $receiver's message on push:{0}:queue, $group's on push:{1}:queue, WAIT 1 answered" \
    enqueued_ok "$run/$lang-shards.out" "$run/$lang-shards.err" "$rc" 'push:{0}:queue' 'push:{1}:queue'
  check "$lang: shards: both messages reached the emulator" wait_for 60 delivered apns "$good"
  check "$lang: shards: feedback in both shards' lists" \
    wait_for 60 eval 'at_least 1 "$dead" "push:{0}:feedback" && at_least 1 "$dead" "push:{1}:feedback"'
  seed_leftover "push:{1}:feedback:processing:$lang-consumer" "leftover-$lang"
  PUSH_SHARDS='push:{0},push:{1}' FEEDBACK_CONSUMER="$lang-consumer" producer "$lang" feedback >"$run/$lang-shards-feedback.out" 2>&1
  rc=$?
  check "$lang: shards: feedback of both shards popped, the leftover handled, the lists empty" \
    eval 'feedback_ok "$run/$lang-shards-feedback.out" "$rc" "leftover-$lang" "$dead" && all_empty "${shard_keys[@]}" \
      "push:{0}:feedback:processing:$lang-consumer" "push:{1}:feedback:processing:$lang-consumer"'
done

# --- Every message ended: queues and processing hashes empty, no dead letter
drained() {
  local key
  for key in push:queue push:queue:bulk 'push:{0}:queue' 'push:{0}:queue:bulk' 'push:{1}:queue' 'push:{1}:queue:bulk'; do
    [ "$(q LLEN "$key")" = 0 ] || return 1
  done
  [ -z "$(q --scan --pattern 'push:processing:*')$(q --scan --pattern 'push:{*}:processing:*')" ]
}
check "every queue drained and every claim acknowledged" wait_for 60 drained
check "no dead letters" eval '[ "$(q LLEN push:dlq)$(q LLEN "push:{0}:dlq")$(q LLEN "push:{1}:dlq")" = 000 ]'

# --- The ACL: nothing the producers did was refused; what a producer must not do is
acl_log="$(q ACL LOG)"
check "the ACL refused nothing the producers did (ACL LOG empty)" test -z "$acl_log"
[ -n "$acl_log" ] && echo "$acl_log"
refused() { redis-cli --no-auth-warning -u "$REDIS_URL" "$@" 2>&1 | grep -q '^NOPERM'; }
refused_all() {
  refused "$@" && return 0
  echo "    not refused: $*"; return 1
}
acl_denies() {
  local ok=0
  refused_all LRANGE 'push:{0}:queue' 0 -1 || ok=1              # read the queue
  refused_all RPOP 'push:{0}:queue' || ok=1                     # take from it
  refused_all LMOVE 'push:{0}:queue' 'push:{0}:feedback:processing:x' RIGHT LEFT || ok=1
  refused_all LPUSH 'push:{0}:feedback' x || ok=1               # forge feedback
  refused_all LPUSH 'push:{0}:dlq' x || ok=1
  refused_all HGETALL 'push:{0}:processing:w' || ok=1
  refused_all DEL 'push:{0}:queue' || ok=1
  refused_all LPUSH other:queue x || ok=1
  refused_all GET 'push:{0}:sequence' || ok=1
  refused_all EVAL 'return 1' 0 || ok=1
  refused_all FLUSHALL || ok=1
  refused_all CONFIG GET maxmemory || ok=1
  refused_all KEYS '*' || ok=1
  refused_all PING || ok=1
  return $ok
}
check "the ACL (shards) refuses reading, taking or deleting queue elements, forging records, other keys and commands" acl_denies
set_acl "$acl_plain"
acl_denies_plain() {
  local ok=0
  refused_all LRANGE push:queue 0 -1 || ok=1
  refused_all RPOP push:queue || ok=1
  refused_all LMOVE push:queue push:feedback:processing:x RIGHT LEFT || ok=1
  refused_all LPUSH push:feedback x || ok=1
  refused_all LPUSH push:dlq x || ok=1
  refused_all HGETALL push:processing:w || ok=1
  refused_all DEL push:queue || ok=1
  refused_all LPUSH 'push:{0}:queue' x || ok=1
  refused_all GET push:sequence || ok=1
  return $ok
}
check "the ACL (prefix push) refuses reading, taking or deleting queue elements, forging records, other keys" acl_denies_plain

# --- Phase 3: how each producer treats its connection, against a Redis of its own (no worker, no replica), so that
# every connection and command it counts is the producer's: LPUSH and WAIT over one connection (PHP: the persistent
# connection handed back for the second message); an LPUSH whose connection breaks before its answer is sent once
# more by the producer, which then goes on (3 elements for 2 messages); when no LPUSH's answer ever comes, the
# producer sends the first message twice, each time waiting out its timeout, and gives up (2 elements and a failure:
# a client library that also retried by itself would leave more); a Redis that accepts the connection and never
# answers at all fails the producer within its timeouts.
solo_port=$(free_port)
mkdir -p "$run/solo"
redis-server --port "$solo_port" --bind 127.0.0.1 --dir "$run/solo" --save "" --appendonly no >"$run/solo.log" 2>&1 &
pids+=($!)
solo() { redis-cli -p "$solo_port" "$@"; }
wait_for 10 solo PING >/dev/null 2>&1 || die "the producers' own redis-server starts" "$run/solo.log"
check "docs/producers.md's ACL line is accepted by the producers' own redis-server" eval '[ "$(printf "%s\n" "$acl_plain" | solo)" = OK ]'
solo_url="redis://producer:$password@127.0.0.1:$solo_port/0"
cat >"$run/netfault.py" <<'PY'
# netfault.py lose-first|lose-all PORT_FILE UPSTREAM_PORT | netfault.py silent PORT_FILE: listens on a free loopback
# port, written to PORT_FILE once it listens.
#   lose-first: passes every connection through to Redis at UPSTREAM_PORT, except the first command chunk that carries
#         an LPUSH: that one reaches Redis, whose answer is awaited (so the LPUSH happened) and dropped, and then the
#         client's connection is closed. The client cannot know whether its LPUSH happened. PORT_FILE.lost is written.
#   lose-all: every chunk that carries an LPUSH reaches Redis, and its answer is awaited and dropped; the client's
#         connection then stays open, and nothing more is answered on it: the client waits out its timeout.
#   silent: accepts connections and reads what comes, and never answers.
import os, selectors, socket, sys, threading
mode, port_file = sys.argv[1], sys.argv[2]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
lost = threading.Lock()   # held once the one answer has been lost
def silent(client):
    while client.recv(65536):
        pass
def lose(client):
    upstream = socket.create_connection(("127.0.0.1", int(sys.argv[3])))
    sel = selectors.DefaultSelector()
    sel.register(client, selectors.EVENT_READ, upstream)
    sel.register(upstream, selectors.EVENT_READ, client)
    try:
        while True:
            for key, _ in sel.select():
                data = key.fileobj.recv(65536)
                if not data:
                    return
                if key.fileobj is client and b"\r\nlpush\r\n" in data.lower() and (
                        mode == "lose-all" or lost.acquire(blocking=False)):
                    upstream.sendall(data)
                    upstream.recv(65536)   # Redis answered: the LPUSH happened; the client never hears it
                    open(port_file + ".lost", "w").close()
                    if mode == "lose-all":
                        silent(client)
                    return
                key.data.sendall(data)
    finally:
        client.close()
        upstream.close()
def serve():
    while True:
        client, _ = server.accept()
        threading.Thread(target=silent if mode == "silent" else lose, args=(client,), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
threading.Event().wait()
PY
start_netfault() {  # MODE NAME [UPSTREAM_PORT]: starts netfault.py; sets netfault_pid and netfault_port
  "$py" "$run/netfault.py" "$1" "$run/$2.port" "${3:-}" >"$run/$2.log" 2>&1 &
  netfault_pid=$!
  pids+=("$netfault_pid")
  wait_for 10 test -s "$run/$2.port" || return 1
  netfault_port=$(cat "$run/$2.port")
}
stop_netfault() { kill "$netfault_pid" 2>/dev/null; wait "$netfault_pid" 2>/dev/null; }
solo_stat() {  # FIELD...: the values of these INFO stats/commandstats fields, in one connection (counted by the caller)
  local info field
  info="$(solo INFO stats commandstats | tr -d '\r')"
  for field in "$@"; do
    case "$field" in
      cmdstat_*) sed -n "s/^$field:calls=\([0-9]*\),.*/\1/p" <<<"$info" | grep . || echo 0 ;;
      *) sed -n "s/^$field://p" <<<"$info" ;;
    esac
  done | tr '\n' ' '
}
one_connection_ok() {  # LANG RC BEFORE AFTER: one connection, 2 LPUSH and 2 WAIT, both shortfalls reported, 2 elements
  local lang="$1" rc="$2" c0 l0 w0 e0 c1 l1 w1 e1
  read -r c0 l0 w0 e0 <<<"$3"; read -r c1 l1 w1 e1 <<<"$4"
  [ "$rc" = 0 ] || { echo "    exit $rc"; return 1; }
  # The INFO that read AFTER is a connection too: one more than the producer's.
  [ $((c1 - c0 - 1)) = 1 ] || { echo "    the producer opened $((c1 - c0 - 1)) connections"; return 1; }
  [ $((l1 - l0)) = 2 ] && [ $((w1 - w0)) = 2 ] || { echo "    LPUSH $((l1 - l0)), WAIT $((w1 - w0))"; return 1; }
  [ "$(grep -c 'reached 0 of 1 replicas' "$run/$lang-solo.err")" = 2 ] || { echo "    WAIT's shortfall not reported twice"; return 1; }
  [ "$(solo LLEN push:queue)" = 2 ] || { echo "    push:queue holds $(solo LLEN push:queue)"; return 1; }
  # phpredis hands the pooled connection out again after AUTH and ECHO on it: one ECHO, one connection.
  if [ "$lang" = php ]; then [ $((e1 - e0)) = 1 ] || { echo "    ECHO $((e1 - e0)) (the pool's check of a reused connection)"; return 1; }; fi
}
fields=(total_connections_received cmdstat_lpush cmdstat_wait cmdstat_echo)
start_netfault silent silent || die "the silent server starts" "$run/silent.log"
silent_port=$netfault_port
i=0
for lang in "${langs[@]}"; do
  i=$((i + 1))
  token=$(tok a1 $((300 + i)))
  solo DEL push:queue >/dev/null
  # No replica here: WAIT 1 answers 0 after 10 ms, and the producer must report it, not push again.
  before="$(solo_stat "${fields[@]}")"
  REDIS_URL="$solo_url" WAIT_REPLICAS=1 WAIT_TIMEOUT_MS=10 PROVIDER=apns TOKENS="$token" producer "$lang" \
    >"$run/$lang-solo.out" 2>"$run/$lang-solo.err"
  rc=$?
  after="$(solo_stat "${fields[@]}")"
  if [ "$lang" = php ]; then
    what="php: both messages over one persistent connection (pconnect: handed back after AUTH and ECHO), LPUSH and WAIT each"
  else
    what="$lang: both messages over one connection, LPUSH and WAIT each"
  fi
  check "$what; WAIT's shortfall reported, nothing pushed again" one_connection_ok "$lang" "$rc" "$before" "$after"

  for mode in lose-first lose-all; do
    solo DEL push:queue >/dev/null
    rm -f "$run/$mode.port" "$run/$mode.port.lost"
    if start_netfault "$mode" "$mode" "$solo_port"; then
      REDIS_URL="redis://producer:$password@127.0.0.1:$netfault_port/0" REDIS_TIMEOUT_MS=500 PROVIDER=apns \
        TOKENS="$token" producer "$lang" >"$run/$lang-$mode.out" 2>"$run/$lang-$mode.err"
      rc=$?
      stop_netfault
    else
      rc=x
    fi
    if [ "$mode" = lose-first ]; then
      check "$lang: an LPUSH whose connection broke before the answer is pushed once more, and the producer goes on (3 elements for 2 messages)" \
        eval '[ "$rc" = 0 ] && [ -e "$run/$mode.port.lost" ] && [ "$(grep -c "^queued " "$run/$lang-$mode.out")" = 2 ] &&
          [ "$(solo LLEN push:queue)" = 3 ]'
    else
      check "$lang: no LPUSH answered in time: pushed twice by the producer, never again by its client, then it fails (2 elements, exit $rc)" \
        eval '[ "$rc" != 0 ] && [ "$rc" != 124 ] && [ -e "$run/$mode.port.lost" ] && ! grep -q "^queued " "$run/$lang-$mode.out" &&
          [ "$(solo LLEN push:queue)" = 2 ]'
    fi
  done

  # producer's 120 s bound only catches a hang (exit 124): it must fail by itself, within its own timeouts (500 ms
  # each here).
  REDIS_URL="redis://producer:$password@127.0.0.1:$silent_port/0" REDIS_TIMEOUT_MS=500 PROVIDER=apns TOKENS="$token" \
    producer "$lang" >"$run/$lang-silent.out" 2>&1
  rc=$?
  check "$lang: a Redis that never answers fails the producer (exit $rc) within its timeouts, no hang" \
    eval '[ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q "^queued " "$run/$lang-silent.out"'
done

kill -TERM "$worker_a" "$worker_b" 2>/dev/null
wait_for 40 eval '! kill -0 "$worker_a" 2>/dev/null && ! kill -0 "$worker_b" 2>/dev/null' ||
  echo "(a worker did not stop within 40 s; it is killed)"
if [ "$failed" -gt 0 ]; then
  echo "-- worker on push:"; tail -20 "$run/worker-a.log"
  echo "-- worker on shards:"; tail -20 "$run/worker-b.log"
fi
failed_total=$failed
echo "($((SECONDS - start)) s)"
echo "producers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
