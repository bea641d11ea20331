#!/usr/bin/env bash
# Runs the worker's image (scripts/image.sh) the way an operator would, with podman and no registry: loaded from
# its OCI archive, started with its own entrypoint and a mounted configuration against a redis-server and the
# emulator on this machine (the host network: no bridge, no port mapping), it must deliver one message to each
# provider (APNs, FCM, Huawei, Xiaomi), answer /readyz with 200 and `worker health` inside, run as uid 10001,
# hold no emulator, print the archive's version and commit with `--version` (COMMIT, when given), and exit 0 on
# SIGTERM. Prints `image: N passed, M failed`.
# podman's settings, for this kind of machine and any like it: the runc runtime (crun refuses a cgroup v1 layout
# like this one), cgroupfs (no systemd to manage cgroups), the file event logger (no journald), and ulimits no
# higher than this shell's (podman's defaults, over a million open files and processes, are above the hard
# limits here, and runc then fails to start the container). Its storage is its own, in the run's folder (vfs:
# plain files), removed at the end with everything else the script started.
# Usage: scripts/test-image.sh OCI_ARCHIVE EMULATOR_BIN [COMMIT]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/test-image.sh OCI_ARCHIVE EMULATOR_BIN [COMMIT]" >&2; exit 2; }
archive="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
emulator="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
expected_commit="${3:-}"
command -v podman >/dev/null && command -v runc >/dev/null || { echo "test-image.sh: run scripts/install-deps.sh --image" >&2; exit 2; }
run="$(mktemp -d /tmp/push-image-test-XXXXXX)"
podman_() {
  podman --root "$run/storage" --runroot "$run/runroot" --tmpdir "$run/libpod" --storage-driver vfs \
    --runtime runc --cgroup-manager cgroupfs --events-backend file "$@"
}
pids=()
cleanup() {
  podman_ rm --all --force --time 0 >/dev/null 2>&1 || true
  podman_ rmi --all --force >/dev/null 2>&1 || true
  # Reaped with wait, so that bash prints no "Killed" notice for them.
  for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf --one-file-system "$run"
}
trap cleanup EXIT
passed=0; failed=0
check() { if eval "$2"; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi; }
# A bounded wait for a condition: 600 tries 0.1 s apart (a minute), true as soon as it holds.
until_true() { local _; for _ in $(seq 600); do eval "$1" && return 0; sleep 0.1; done; return 1; }

# The archive's name says its version: push-worker-<VERSION>-linux-<arch>.oci.tar.
name="$(basename "$archive" .oci.tar)"
version="${name#push-worker-}"; version="${version%-linux-*}"
image="$(podman_ load --input "$archive" 2>"$run/load.log" | sed -nE 's/^Loaded image[^:]*: *//p' | head -1)"
check "podman loads $(basename "$archive") ($image)" '[ -n "$image" ]'
[ -n "$image" ] || { cat "$run/load.log"; echo "image: $passed passed, $failed failed"; exit 1; }
label() { podman_ image inspect --format "{{ index .Labels \"org.opencontainers.image.$1\" }}" "$image"; }
revision="$(label revision)"
check "its labels name version $version and a commit ($(label version), $revision)" \
  '[ "$(label version)" = "$version" ] && [[ $revision =~ ^[0-9a-f]{40}$ ]]'

# Limits no higher than this shell's; processes also no more than the kernel's pid_max (no more can exist, and
# podman's own processes run with that limit here).
pid_max="$(cat /proc/sys/kernel/pid_max)"
at_most() { if [ "$1" = unlimited ] || [ "$1" -gt "$2" ]; then echo "$2"; else echo "$1"; fi; }
nproc_hard="$(at_most "$(ulimit -Hu)" "$pid_max")"
nproc_soft="$(at_most "$(ulimit -Su)" "$nproc_hard")"
nofile_hard="$(ulimit -Hn)"
nofile_soft="$(ulimit -Sn)"
# --log-driver k8s-file: podman's default may be journald, which a machine without systemd lacks.
limits=(--ulimit "nofile=$nofile_soft:$nofile_hard" --ulimit "nproc=$nproc_soft:$nproc_hard" --log-driver k8s-file)

printed="$(podman_ run --rm --network host "${limits[@]}" "$image" --version 2>&1 || true)"
check "worker --version in the image prints $version and the labelled commit ($printed)" '[ "$printed" = "$version (commit $revision)" ]'
if [ -n "$expected_commit" ]; then
  check "that commit is the one it was built from ($expected_commit)" '[ "$revision" = "$expected_commit" ]'
fi
check "the image holds no emulator and no Swift runtime" \
  "podman_ run --rm --network host ${limits[*]} --entrypoint /bin/sh '$image' -c '! ls /usr/local/bin/push-emulator /usr/lib/swift >/dev/null 2>&1'"

# Redis and the emulator on free loopback ports, with the credentials of the demo (scripts/demo.sh).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
redis_port=$(free_port); apns_port=$(free_port); fcm_port=$(free_port); vendor_port=$(free_port); metrics_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$run" --save "" --appendonly no >"$run/redis.log" 2>&1 &
pids+=($!)
secrets="$run/secrets"
mkdir -p "$secrets"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$secrets/AuthKey_IMG0000001.p8" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$run/fcm-key.pem" 2>/dev/null
python3 - "$run" "$apns_port" <<'PY'
import json, sys
run, port = sys.argv[1], sys.argv[2]
json.dump({"type": "service_account", "project_id": "image-project", "private_key_id": "img00000000000000000000000000000000001",
           "private_key": open(run + "/fcm-key.pem").read(), "client_email": "push@image-project.iam.gserviceaccount.com",
           "client_id": "1", "token_uri": "https://127.0.0.1:%s/token" % port}, open(run + "/secrets/sa.json", "w"))
PY
printf 'c2VjcmV0LWZvci1pbWFnZQ+/=\n' > "$secrets/huawei-secret.txt"
printf 'xiaomi-image-app-secret\n' > "$secrets/xiaomi-secret.txt"
"$emulator" --port "$apns_port" --write-ca "$secrets/ca.pem" --provider-key "IMG0000001:IMG0000001:$secrets/AuthKey_IMG0000001.p8" \
  --record "$run/apns.jsonl" --fcm-service-account "$secrets/sa.json" --fcm-port "$fcm_port" --fcm-record "$run/fcm.jsonl" \
  --vendor-port "$vendor_port" --huawei-app "104000001:$secrets/huawei-secret.txt" \
  --xiaomi-app "$secrets/xiaomi-secret.txt:com.example.chat::im-private" >"$run/emulator.log" 2>&1 &
pids+=($!)
until_true 'grep -q "vendor listening" "$run/emulator.log" 2>/dev/null' || { echo "the emulator did not start:"; cat "$run/emulator.log"; exit 1; }
until_true 'redis-cli -p "$redis_port" PING >/dev/null 2>&1' || { echo "redis-server did not start:"; cat "$run/redis.log"; exit 1; }

# The worker's configuration and keys as an operator mounts them: read-only, the keys owned by the image's user
# (10001) and readable by it alone, at the image's own configuration path.
cat > "$run/worker.yaml" <<YAML
redis:
  url: redis://127.0.0.1:$redis_port/0
apns:
  endpoint: https://127.0.0.1:$apns_port
  ca_file: /etc/push/secrets/ca.pem
  apps:
    - { topic: com.example.chat, team_id: IMG0000001, key_id: IMG0000001, key_file: /etc/push/secrets/AuthKey_IMG0000001.p8 }
fcm:
  endpoint: https://127.0.0.1:$fcm_port
  ca_file: /etc/push/secrets/ca.pem
  apps:
    - { topic: com.example.chat, service_account_file: /etc/push/secrets/sa.json }
huawei:
  endpoint: https://127.0.0.1:$vendor_port
  token_uri: https://127.0.0.1:$vendor_port/oauth2/v3/token
  ca_file: /etc/push/secrets/ca.pem
  apps:
    - { topic: com.example.chat, api: v1, app_id: "104000001", client_secret_file: /etc/push/secrets/huawei-secret.txt, category: IM }
xiaomi:
  endpoint: https://127.0.0.1:$vendor_port
  ca_file: /etc/push/secrets/ca.pem
  apps:
    - { topic: com.example.chat, package: com.example.chat, app_secret_file: /etc/push/secrets/xiaomi-secret.txt, channel_id: im-private }
metrics:
  listen: 127.0.0.1:$metrics_port
YAML
chmod 600 "$secrets"/*
chmod 700 "$secrets"
chown -R 10001:10001 "$secrets"
chmod 644 "$run/worker.yaml"

q() { redis-cli -p "$redis_port" "$@" >/dev/null; }
token="a1$(printf '%062x' 7)"
ftoken="d1Zq7:APA91b$(printf 'Xk_9-%.0s' $(seq 24))"
htoken="hw1-IQAAAACy0kYhAAB00000001Xk/9+Zq7=="
mtoken="mi1-IQAAAACy0kYhAAB00000001Xk/9+Zq7=="
android='{"notification":{"title":"Alice","body":"hi"},"data":{"conversation":"c1"}}'
q LPUSH push:queue "{\"id\":\"img-apns\",\"topic\":\"com.example.chat\",\"tokens\":[\"$token\"],\"payload\":{\"aps\":{\"alert\":\"hi\"}}}"
q LPUSH push:queue "{\"id\":\"img-fcm\",\"provider\":\"fcm\",\"topic\":\"com.example.chat\",\"tokens\":[\"$ftoken\"],\"payload\":$android}"
q LPUSH push:queue "{\"id\":\"img-huawei\",\"provider\":\"huawei\",\"topic\":\"com.example.chat\",\"tokens\":[\"$htoken\"],\"payload\":$android}"
q LPUSH push:queue "{\"id\":\"img-xiaomi\",\"provider\":\"xiaomi\",\"topic\":\"com.example.chat\",\"tokens\":[\"$mtoken\"],\"payload\":$android}"

container="push-worker-test-$$"
podman_ run --detach --name "$container" --network host "${limits[@]}" \
  --volume "$run/worker.yaml:/etc/push/worker.yaml:ro" --volume "$secrets:/etc/push/secrets:ro" "$image" >"$run/run.log" 2>&1 || true
check "the container starts with the image's entrypoint and command" '[ "$(podman_ inspect --format "{{.State.Running}}" "$container" 2>/dev/null)" = true ]'
vendor_delivered() {
  curl -s --cacert "$secrets/ca.pem" "https://127.0.0.1:$vendor_port/_emulator/$1/stats" 2>/dev/null \
    | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin).get("delivered", 0) >= 1 else 1)' 2>/dev/null
}
until_true 'grep -q "$token" "$run/apns.jsonl" 2>/dev/null && grep -q d1Zq7 "$run/fcm.jsonl" 2>/dev/null && vendor_delivered huawei && vendor_delivered xiaomi' || true
check "it delivers an APNs message" 'grep -q "$token" "$run/apns.jsonl" 2>/dev/null'
check "it delivers an FCM message" 'grep -q d1Zq7 "$run/fcm.jsonl" 2>/dev/null'
check "it delivers a Huawei message" 'vendor_delivered huawei'
check "it delivers a Xiaomi message" 'vendor_delivered xiaomi'
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$metrics_port/readyz")" = 200 ]; }
check "/readyz answers 200" 'until_true ready'
build_info() { curl -s "http://127.0.0.1:$metrics_port/metrics" | grep '^push_build_info{' | grep "version=\"$version\"" | grep -q "commit=\"$revision\""; }
check "push_build_info says the version and the commit" build_info
check "worker health (the Dockerfile's HEALTHCHECK) passes inside the container" \
  'podman_ exec "$container" /usr/local/bin/worker health --config /etc/push/worker.yaml >/dev/null 2>&1'
check "the worker runs as uid 10001, not root" '[ "$(podman_ exec "$container" id -u 2>/dev/null)" = 10001 ]'
podman_ stop --time 30 "$container" >/dev/null 2>&1 || true
check "SIGTERM drains it and the container exits 0" '[ "$(podman_ inspect --format "{{.State.ExitCode}}" "$container" 2>/dev/null)" = 0 ]'
[ "$failed" -eq 0 ] || { echo "--- podman run"; cat "$run/run.log"; echo "--- worker log"; podman_ logs "$container" 2>&1 | tail -30; echo "--- emulator log"; tail -10 "$run/emulator.log"; }
echo "image: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
