#!/usr/bin/env bash
# Checks a release tarball the way an operator meets it: unpacked on this machine, run with a PATH and library
# path that hold no Swift. The binary must not link a Swift runtime library, must find every library it loads,
# from the Debian packages its runtime-packages.txt names (each installed here), must print the VERSION it ships
# and the commit it was built from (COMMIT, when given), pass `check-config` on a configuration for a local Redis
# and the emulator, and deliver an APNs and an FCM message through them. Prints `release: N passed, M failed`.
# Usage: scripts/test-release.sh TARBALL EMULATOR_BIN [COMMIT]
set -euo pipefail
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
emulator="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
expected_commit="${3:-}"
run="$(mktemp -d /tmp/push-release-XXXXXX)"
pids=()
# Reaped with wait, so that bash prints no "Killed" notice for them.
cleanup() { for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null || true; done; rm -rf "$run"; }
trap cleanup EXIT
passed=0; failed=0
check() { if eval "$2"; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi; }

tar -xzf "$tarball" -C "$run"
dir="$(find "$run" -maxdepth 1 -type d -name 'push-worker-*' | head -1)"
worker="$dir/bin/worker"
noswift() { env -i PATH=/usr/bin:/bin HOME="$run" LANG=C.UTF-8 "$@"; }
check "the binary links no Swift runtime library" "! ldd '$worker' | grep -q libswift"
check "every library the binary loads is found (ldd)" "ldd '$worker' >'$run/ldd.txt' && ! grep -q 'not found' '$run/ldd.txt'"
# The first word of each line that is no comment: the packages an operator installs (README, docs/deploy.md).
packages="$(grep -v '^#' "$dir/runtime-packages.txt" 2>/dev/null | cut -d' ' -f1 | tr '\n' ' ' || true)"
packages_installed() {
  local p
  [ -n "$packages" ] || return 1
  for p in $packages; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || return 1; done
}
check "runtime-packages.txt names the Debian packages ($packages), each installed here" packages_installed
version="$(tr -d '[:space:]' < "$dir/VERSION")"
printed="$(noswift "$worker" --version 2>&1 || true)"
version_pattern="^${version//./\\.} \\(commit [0-9a-f]{40}\\)$"
check "worker --version prints the VERSION it ships and its commit ($printed)" '[[ $printed =~ $version_pattern ]]'
if [ -n "$expected_commit" ]; then
  check "the commit it prints is the one it was built from ($expected_commit)" '[ "$printed" = "$version (commit $expected_commit)" ]'
fi
check "LICENSE, CHANGELOG.md, the example configuration and the systemd unit are in it" \
  "[ -s '$dir/LICENSE' ] && [ -s '$dir/CHANGELOG.md' ] && [ -s '$dir/config/worker.example.yaml' ] && ls '$dir'/deploy/systemd/*.service >/dev/null"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
redis_port=$(free_port); apns_port=$(free_port); fcm_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$run" --save "" --appendonly no >"$run/redis.log" 2>&1 &
pids+=($!)
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$run/AuthKey_REL0000001.p8" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$run/fcm-key.pem" 2>/dev/null
python3 - "$run" "$apns_port" <<'PY'
import json, sys
run, port = sys.argv[1], sys.argv[2]
json.dump({"type": "service_account", "project_id": "release-project", "private_key_id": "rel00000000000000000000000000000000001",
           "private_key": open(run + "/fcm-key.pem").read(), "client_email": "push@release-project.iam.gserviceaccount.com",
           "client_id": "1", "token_uri": "https://127.0.0.1:%s/token" % port}, open(run + "/sa.json", "w"))
PY
"$emulator" --port "$apns_port" --write-ca "$run/ca.pem" --provider-key "REL0000001:REL0000001:$run/AuthKey_REL0000001.p8" \
  --record "$run/delivered.jsonl" --fcm-service-account "$run/sa.json" --fcm-port "$fcm_port" --fcm-record "$run/fcm.jsonl" \
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
    - { topic: com.example.chat, team_id: REL0000001, key_id: REL0000001, key_file: $run/AuthKey_REL0000001.p8 }
fcm:
  endpoint: https://127.0.0.1:$fcm_port
  ca_file: $run/ca.pem
  apps:
    - { topic: com.example.chat, service_account_file: $run/sa.json }
metrics:
  listen: ""
YAML
chmod 600 "$run"/*.p8 "$run"/*.pem "$run/sa.json"
check "check-config passes on the demo's kind of configuration" "noswift '$worker' check-config --config '$run/worker.yaml' >'$run/check.log' 2>&1"
token="a1$(printf '%062x' 7)"
ftoken="d1Zq7:APA91b$(printf 'Xk_9-%.0s' $(seq 24))"
redis-cli -p "$redis_port" LPUSH push:queue "{\"id\":\"r1\",\"topic\":\"com.example.chat\",\"tokens\":[\"$token\"],\"payload\":{\"aps\":{\"alert\":\"hi\"}}}" >/dev/null
redis-cli -p "$redis_port" LPUSH push:queue "{\"id\":\"r2\",\"provider\":\"fcm\",\"topic\":\"com.example.chat\",\"tokens\":[\"$ftoken\"],\"payload\":{\"notification\":{\"body\":\"hi\"}}}" >/dev/null
# Not through `noswift`: a shell function run in the background is a subshell, whose pid (`$!`) is not the
# worker's, so the TERM below and the cleanup would leave the worker running. `env` execs the worker itself.
env -i PATH=/usr/bin:/bin HOME="$run" LANG=C.UTF-8 "$worker" run --config "$run/worker.yaml" >"$run/worker.log" 2>&1 &
wpid=$!
pids+=($wpid)
for _ in $(seq 300); do
  [ -s "$run/delivered.jsonl" ] && [ -s "$run/fcm.jsonl" ] && break
  sleep 0.1
done
check "the unpacked worker delivers an APNs message" "grep -q '$token' '$run/delivered.jsonl' 2>/dev/null"
check "the unpacked worker delivers an FCM message" "grep -q 'd1Zq7' '$run/fcm.jsonl' 2>/dev/null"
kill -TERM "$wpid" 2>/dev/null || true
wait "$wpid" 2>/dev/null || true
[ "$failed" -eq 0 ] || { echo "--- check-config"; cat "$run/check.log" 2>/dev/null; echo "--- worker log"; tail -30 "$run/worker.log"; }
echo "release: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
