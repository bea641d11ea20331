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
redis_port=$(free_port); apns_port=$(free_port); fcm_port=$(free_port); vendor_port=$(free_port); metrics_port=$(free_port)
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
# China's vendors: a Huawei Android app's client secret, a HarmonyOS service account key, a Xiaomi AppSecret.
printf 'c2VjcmV0LWZvci1kZW1vcw+/=\n' > "$run/huawei-secret.txt"
printf 'xiaomi-demo-app-secret\n' > "$run/xiaomi-secret.txt"
printf 'honor-demo-client-secret\n' > "$run/honor-secret.txt"   # Honor's OAuth client secret
printf 'oppo-demo-master-secret\n' > "$run/oppo-secret.txt"     # OPPO's MasterSecret (its auth sign)
printf 'vivo-demo-app-secret\n' > "$run/vivo-secret.txt"        # vivo's AppSecret (its auth sign)
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$run/huawei-key.pem" 2>/dev/null
python3 - "$run" <<'PY'
import json, sys
run = sys.argv[1]
json.dump({"project_id": "388421841221234567", "key_id": "demo0001", "sub_account": "100123456",
           "private_key": open(run + "/huawei-key.pem").read(),
           "token_uri": "https://oauth-login.cloud.huawei.com/oauth2/v3/token"}, open(run + "/huawei-key.json", "w"), indent=2)
PY
chmod 600 "$run"/*-secret.txt "$run/huawei-key.json"
# The emulator checks the JWT against this key, and answers by token prefix where the demo wants a failure.
"$emulator" --port "$apns_port" --write-ca "$run/ca.pem" --provider-key "DEMO000001:DEMO000001:$run/AuthKey_DEMO000001.p8" \
  --answer "410a=410:Unregistered@1700000000000" --answer "5030=503:ServiceUnavailable" \
  --record "$run/delivered.jsonl" \
  --fcm-service-account "$run/fcm-service-account.json" --fcm-port "$fcm_port" --fcm-record "$run/fcm-delivered.jsonl" \
  --vendor-port "$vendor_port" --huawei-app "104000001:$run/huawei-secret.txt" --huawei-service-account "$run/huawei-key.json" \
  --xiaomi-app "$run/xiaomi-secret.txt:com.example.chat::im-private" \
  --honor-app "104000002:104000002-client:$run/honor-secret.txt" --oppo-app "demo-oppo-app-key:$run/oppo-secret.txt" \
  --vivo-app "10004:demo-vivo-app-key:$run/vivo-secret.txt" \
  >"$run/emulator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "vendor listening" "$run/emulator.log" 2>/dev/null && break; sleep 0.1; done
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
huawei:
  endpoint: https://127.0.0.1:$vendor_port
  token_uri: https://127.0.0.1:$vendor_port/oauth2/v3/token
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat          # Android phones with HMS Core (Push Kit v1)
      api: v1
      app_id: "104000001"
      client_secret_file: $run/huawei-secret.txt
      category: IM
    - topic: com.example.harmony       # HarmonyOS 5+ (Push Kit v3)
      api: v3
      service_account_file: $run/huawei-key.json
xiaomi:
  endpoint: https://127.0.0.1:$vendor_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      package: com.example.chat
      app_secret_file: $run/xiaomi-secret.txt
      channel_id: im-private
honor:
  endpoint: https://127.0.0.1:$vendor_port
  token_uri: https://127.0.0.1:$vendor_port/auth/token
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      app_id: "104000002"
      client_id: 104000002-client
      client_secret_file: $run/honor-secret.txt
oppo:
  endpoint: https://127.0.0.1:$vendor_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      app_key: demo-oppo-app-key
      master_secret_file: $run/oppo-secret.txt
vivo:
  endpoint: https://127.0.0.1:$vendor_port
  ca_file: $run/ca.pem
  apps:
    - topic: com.example.chat
      app_id: "10004"
      app_key: demo-vivo-app-key
      app_secret_file: $run/vivo-secret.txt
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
vtok() { printf '%s%d-IQAAAACy0kYhAAB%08dXk/9+Zq7==' "$1" "$2" "$2"; }   # vendor tokens; the emulator answers by prefix
vlist() { local out="" i; for i in $(seq 1 "$3"); do out+="\"$(vtok "$2" $i)\","; done; printf '[%s"%s"]' "$out" "$(vtok "unregistered$2" 1)"; }
echo "enqueueing China Android messages (\"provider\": huawei, xiaomi, honor, oppo, vivo): one group notice each, to 50 phones and one uninstalled"
vpayload='{"notification":{"title":"Team","body":"Lunch at noon"},"data":{"conversation":"g1"}}'
q LPUSH push:queue "{\"id\":\"huawei-group\",\"provider\":\"huawei\",\"kind\":\"group\",\"topic\":\"com.example.chat\",\"tokens\":$(vlist x hw 50),\"payload\":$vpayload}" >/dev/null
q LPUSH push:queue "{\"id\":\"harmony-group\",\"provider\":\"huawei\",\"kind\":\"group\",\"topic\":\"com.example.harmony\",\"tokens\":$(vlist x hm 50),\"payload\":$vpayload}" >/dev/null
q LPUSH push:queue "{\"id\":\"xiaomi-group\",\"provider\":\"xiaomi\",\"kind\":\"group\",\"topic\":\"com.example.chat\",\"tokens\":$(vlist x mi 50),\"payload\":$vpayload}" >/dev/null
for vendor in honor oppo vivo; do
  q LPUSH push:queue "{\"id\":\"$vendor-group\",\"provider\":\"$vendor\",\"kind\":\"group\",\"topic\":\"com.example.chat\",\"tokens\":$(vlist x "$vendor" 50),\"payload\":$vpayload}" >/dev/null
done
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
echo "Huawei: $(curl -s --cacert "$run/ca.pem" "https://127.0.0.1:$vendor_port/_emulator/huawei/stats" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s.get("delivered"), "delivered in", s.get("requests"), "requests (50 Android + 50 HarmonyOS phones; the two uninstalled ones went to feedback)")' 2>/dev/null || echo n/a)"
echo "Xiaomi: $(curl -s --cacert "$run/ca.pem" "https://127.0.0.1:$vendor_port/_emulator/xiaomi/stats" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s.get("delivered"), "delivered in", s.get("requests"), "request(s) (50 phones; the uninstalled one went to feedback)")' 2>/dev/null || echo n/a)"
for vendor in honor oppo vivo; do
  echo "$vendor: $(curl -s --cacert "$run/ca.pem" "https://127.0.0.1:$vendor_port/_emulator/$vendor/stats" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s.get("delivered"), "delivered in", s.get("requests"), "request(s) (50 phones; the uninstalled one went to feedback)")' 2>/dev/null || echo n/a)"
done
echo "emulator counters: $(curl -s --cacert "$run/ca.pem" "https://127.0.0.1:$apns_port/_emulator/stats" 2>/dev/null || echo n/a)"
echo "push:queue left: $(q LLEN push:queue)    push:processing:*: $(q --scan --pattern 'push:processing:*' | wc -l)"
echo "-- push:feedback (tokens the backend must drop)"; q LRANGE push:feedback 0 -1
echo "-- push:dlq (dead letters, with reasons)"; q LRANGE push:dlq 0 -1
echo "-- push:filtered (sensitive-word audit)"; q LRANGE push:filtered 0 -1
echo "-- the worker's /readyz: $ready"
echo "-- some of its /metrics (Prometheus text; docs/operations.md explains each; series at 0 left out)"
grep -E '^push_(notifications_total|messages_[a-z]+_total|provider_responses_total|provider_connections|provider_streams_limit|provider_access_token_renewals_total|queue_length|build_info)' <<<"$metrics" \
  | grep -vE ' 0(\.0)?$' || true
echo "-- worker log"; cat "$run/worker.log"
echo
echo "one delivered notification as the emulator recorded it:"; head -1 "$run/delivered.jsonl"
echo "one delivered FCM message as the emulator recorded it:"; head -1 "$run/fcm-delivered.jsonl" 2>/dev/null || true
echo "files of this run: $run"
