#!/usr/bin/env bash
# The demo: installs what is missing, starts a local redis-server and the emulator (APNs and FCM, HTTP/2 +
# TLS) on free loopback ports, enqueues sample messages for iPhones (APNs) and Android phones (FCM), runs the
# worker until the queue is drained, and prints where every message ended, per provider. Nothing leaves this
# machine. Run it from anywhere.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/install-deps.sh
# The demo's worker takes its configuration from the demo's file alone: a variable such as REDIS_URL or
# METRICS_LISTEN in the caller's environment would win over the file and point it at another Redis or port
# (one of this machine's own services, say).
for variable in $(compgen -e); do
  case "$variable" in
    WORKER_*|REDIS_*|COLLECTOR_*|RECOVERY_*|APNS_*|FCM_*|FILTER_*|RETRY_*|METRICS_*|LOG_*|SHUTDOWN_*) unset "$variable" ;;
  esac
done
echo "building the worker and the emulator (release; the first build takes a few minutes)..."
swift build -c release --product worker 2>&1 | tail -1
swift build -c release --product push-emulator 2>&1 | tail -1
worker="$root/.build/release/worker"
emulator="$root/.build/release/push-emulator"

run="$(mktemp -d /tmp/push-demo-XXXXXX)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
redis_port=$(free_port); apns_port=$(free_port); fcm_port=$(free_port); metrics_port=$(free_port)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$run" --save "" --appendonly no >"$run/redis.log" 2>&1 &
pids+=($!)
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$run/AuthKey_DEMO000001.p8" 2>/dev/null
printf '# demo sensitive words\nspam\n赌博\n' > "$run/words.txt"
# A Firebase service account for FCM: a fresh RSA key and the JSON key file the Firebase console would give,
# its token_uri pointing at the emulator's token endpoint.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$run/fcm-key.pem" 2>/dev/null
python3 - "$run" "$apns_port" <<'PY'
import json, sys
run, port = sys.argv[1], sys.argv[2]
json.dump({"type": "service_account", "project_id": "demo-project", "private_key_id": "demo0000000000000000000000000000000001",
           "private_key": open(run + "/fcm-key.pem").read(), "client_email": "push-demo@demo-project.iam.gserviceaccount.com",
           "client_id": "1", "token_uri": "https://127.0.0.1:%s/token" % port}, open(run + "/fcm-service-account.json", "w"), indent=2)
PY
# The emulator checks the JWT against this key, and answers by token prefix where the demo wants a failure.
"$emulator" --port "$apns_port" --write-ca "$run/ca.pem" --provider-key "DEMO000001:DEMO000001:$run/AuthKey_DEMO000001.p8" \
  --answer "410a=410:Unregistered@1700000000000" --answer "5030=503:ServiceUnavailable" \
  --record "$run/delivered.jsonl" \
  --fcm-service-account "$run/fcm-service-account.json" --fcm-port "$fcm_port" --fcm-record "$run/fcm-delivered.jsonl" \
  >"$run/emulator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "fcm listening" "$run/emulator.log" 2>/dev/null && break; sleep 0.1; done
for _ in $(seq 50); do redis-cli -p "$redis_port" PING >/dev/null 2>&1 && break; sleep 0.1; done

cat > "$run/worker.yaml" <<YAML
redis:
  url: redis://127.0.0.1:$redis_port/0
apns:
  endpoint: https://127.0.0.1:$apns_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      team_id: DEMO000001
      key_id: DEMO000001
      key_file: $run/AuthKey_DEMO000001.p8
fcm:
  endpoint: https://127.0.0.1:$fcm_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      service_account_file: $run/fcm-service-account.json
filter:
  words_file: $run/words.txt
retry:
  max_attempts: 3
  base_delay_ms: 50
metrics:
  listen: 127.0.0.1:$metrics_port
YAML

tok() { printf '%s%0*x' "$1" $((64 - ${#1})) "$2"; }   # 64 hex digits; the emulator answers by prefix
q() { redis-cli -p "$redis_port" "$@"; }
echo "enqueueing sample messages (LPUSH push:queue ...)"
for i in $(seq 1 200); do
  q LPUSH push:queue "{\"id\":\"chat-$i\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(tok a1 $i)\"],\"payload\":{\"aps\":{\"alert\":{\"title\":\"Alice\",\"body\":\"message $i\"}}},\"enqueued_at\":$(date +%s%3N)}" >/dev/null
done
for g in 1 2 3; do  # one group notice to three overlapping audiences: merged into one push job
  q LPUSH push:queue "{\"id\":\"group-$g\",\"kind\":\"group\",\"uuid\":\"notice-42\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(tok a1 1000)\",\"$(tok a1 $((1000+g)))\"],\"payload\":{\"aps\":{\"alert\":\"Team lunch at noon\"}}}" >/dev/null
done
q LPUSH push:queue "{\"id\":\"uninstalled\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(tok 410a 1)\"],\"payload\":{\"aps\":{\"alert\":\"hi\"}}}" >/dev/null
q LPUSH push:queue "{\"id\":\"typo-token\",\"topic\":\"com.example.chat\",\"tokens\":[\"not-a-token\",\"$(tok a1 2000)\"],\"payload\":{\"aps\":{\"alert\":\"hi\"}}}" >/dev/null
q LPUSH push:queue "{\"id\":\"rude\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(tok a1 3000)\"],\"payload\":{\"aps\":{\"alert\":\"cheap S-P-A-M here\"}}}" >/dev/null
q LPUSH push:queue "{\"id\":\"apns-busy\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(tok 5030 1)\"],\"payload\":{\"aps\":{\"alert\":\"hi\"}}}" >/dev/null
q LPUSH push:queue '{"id": "broken", "topic": ' >/dev/null
ftok() { printf '%s%dZq7:APA91b%s' "$1" "$2" "$(printf 'Xk_9-%.0s' $(seq 24))"; }   # FCM registration tokens; the emulator answers by prefix
echo "enqueueing Android messages (\"provider\": \"fcm\")"
for i in $(seq 1 100); do
  q LPUSH push:queue "{\"id\":\"android-$i\",\"provider\":\"fcm\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(ftok d $i)\"],\"payload\":{\"notification\":{\"title\":\"Alice\",\"body\":\"message $i\"},\"data\":{\"conversation\":\"c$i\"}},\"priority\":10,\"enqueued_at\":$(date +%s%3N)}" >/dev/null
done
q LPUSH push:queue "{\"id\":\"android-uninstalled\",\"provider\":\"fcm\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(ftok unregistered 1)\"],\"payload\":{\"notification\":{\"body\":\"hi\"}}}" >/dev/null
q LPUSH push:queue "{\"id\":\"android-bad-data\",\"provider\":\"fcm\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(ftok d 999)\"],\"payload\":{\"data\":{\"count\":3}}}" >/dev/null
q LPUSH push:queue "{\"id\":\"android-rude\",\"provider\":\"fcm\",\"topic\":\"com.example.chat\",\"tokens\":[\"$(ftok d 998)\"],\"payload\":{\"notification\":{\"body\":\"cheap s p a m\"}}}" >/dev/null
echo "queue depth: $(q LLEN push:queue)"

echo "starting: worker run --config $run/worker.yaml"
"$worker" run --config "$run/worker.yaml" 2>"$run/worker.log" &
wpid=$!
for _ in $(seq 300); do
  [ "$(q LLEN push:queue)" = "0" ] && [ -z "$(q --scan --pattern 'push:processing:*')" ] && break
  sleep 0.1
done
sleep 2.2  # one sampling period, so the gauges are current
metrics="$(curl -s "http://127.0.0.1:$metrics_port/metrics" || true)"
ready="$(curl -s "http://127.0.0.1:$metrics_port/readyz" || true)"
kill -TERM "$wpid"; wait "$wpid" || true

delivered=$(wc -l < "$run/delivered.jsonl")
fcm_delivered=$(wc -l < "$run/fcm-delivered.jsonl" 2>/dev/null || echo 0)
echo
echo "== what happened"
echo "APNs: notifications the emulator accepted: $delivered (200 chats + 4 distinct group receivers + 1 good token of typo-token)"
echo "FCM: messages the emulator accepted: $fcm_delivered (100 Android chats; android-uninstalled went to feedback, android-bad-data to the dead letters, android-rude to the filtered list)"
echo "emulator counters: $(curl -s --cacert "$run/ca.pem" "https://127.0.0.1:$apns_port/_emulator/stats" 2>/dev/null || echo n/a)"
echo "push:queue left: $(q LLEN push:queue)    push:processing:*: $(q --scan --pattern 'push:processing:*' | wc -l)"
echo "-- push:feedback (tokens the backend must drop)"; q LRANGE push:feedback 0 -1
echo "-- push:dlq (dead letters, with reasons)"; q LRANGE push:dlq 0 -1
echo "-- push:filtered (sensitive-word audit)"; q LRANGE push:filtered 0 -1
echo "-- the worker's /readyz: $ready"
echo "-- some of its /metrics (Prometheus text; docs/operations.md explains each; series at 0 left out)"
grep -E '^push_(notifications_total|messages_[a-z]+_total|apns_responses_total|apns_connections|apns_streams_limit|fcm_responses_total|fcm_connections|fcm_streams_limit|fcm_access_token_renewals_total|queue_length|build_info)' <<<"$metrics" \
  | grep -vE ' 0(\.0)?$' || true
echo "-- worker log"; cat "$run/worker.log"
echo
echo "one delivered notification as the emulator recorded it:"; head -1 "$run/delivered.jsonl"
echo "one delivered FCM message as the emulator recorded it:"; head -1 "$run/fcm-delivered.jsonl" 2>/dev/null || true
echo "files of this run: $run"
