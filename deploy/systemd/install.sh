#!/usr/bin/env bash
# Installs the worker as systemd services (deploy/systemd/push-worker@.service), from a checkout:
#   swift build -c release --product worker
#   sudo deploy/systemd/install.sh                 # or: --binary PATH for a worker built elsewhere
#   sudo editor /etc/push/worker.yaml              # Redis, the apps of each provider, their key files (docs/deploy.md)
#   sudo install -o push -g push -m 0600 AuthKey_ABC123DEFG.p8 ... /etc/push/keys/
#   sudo systemctl enable --now push-worker@1 push-worker@2
# What it does: creates the system user and group `push` (no home, no shell), installs the binary as
# /usr/local/bin/worker, the unit, /etc/push/worker.example.yaml, /etc/push/worker.yaml (deploy/systemd/worker.yaml:
# an example app for each provider, APNs, FCM, Huawei and Xiaomi, its credentials in /etc/push/keys) and one
# /etc/push/worker-N.env per instance (--instances COUNT, default 2: WORKER_ID=<host>-N and a metrics port of its
# own, 9463+N, or the next one no other environment file uses) if they are missing (never overwritten),
# /etc/push/keys for the credentials (APNs keys, FCM service accounts, Huawei client secrets and service accounts,
# Xiaomi AppSecrets), and the documents the unit's Documentation= names under /usr/share/doc/push-worker.
# Run it again to upgrade: the binary, the unit, the example and the documents are replaced, your files kept.
#
# DESTDIR=DIR stages everything under DIR instead (packaging, scripts/check-deploy-systemd.sh): no user is
# created, nothing is chowned, systemd is not told.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
binary=""
instances=2
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --instances) instances="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
case "$instances" in
  ''|*[!0-9]*|0) echo "install.sh: --instances takes a count of 1 or more" >&2; exit 2 ;;
esac
if [ -z "$binary" ]; then
  binary="$(cd "$repo" && swift build -c release --show-bin-path 2>/dev/null)/worker" || true
fi
if [ ! -x "$binary" ]; then
  echo "install.sh: no worker binary at $binary: build it with 'swift build -c release --product worker' or pass --binary PATH" >&2
  exit 1
fi
# The binary links Debian's hiredis, libcurl, nghttp2, OpenSSL, ICU and jemalloc: say which are missing here
# (the build machine has them through scripts/install-deps.sh; a machine that only runs the worker needs the
# runtime packages the Dockerfile's second stage installs).
if missing="$(ldd "$binary" 2>/dev/null | grep 'not found')"; then
  echo "install.sh: $binary needs libraries this machine lacks:" >&2
  echo "$missing" >&2
  echo "install.sh: apt-get install libhiredis0.14 libnghttp2-14 libjemalloc2 libcurl4 libssl3 libicu72" >&2
  exit 1
fi

root="${DESTDIR:-}"
staged=0; [ -n "$root" ] && staged=1
if [ "$staged" = 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (or with DESTDIR=DIR to stage)" >&2
  exit 1
fi
if [ "$staged" = 0 ] && ! getent passwd push >/dev/null; then
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin push
  echo "created the system user push"
fi
# Owner and group for the files the worker must read: root owns them, the push group reads them.
owner=(); [ "$staged" = 0 ] && owner=(-o root -g push)

install -D -m 0755 "$binary" "$root/usr/local/bin/worker"
install -D -m 0644 "$repo/deploy/systemd/push-worker@.service" "$root/etc/systemd/system/push-worker@.service"
install -d -m 0750 "${owner[@]}" "$root/etc/push" "$root/etc/push/keys"
install -m 0644 "$repo/config/worker.example.yaml" "$root/etc/push/worker.example.yaml"
if [ ! -e "$root/etc/push/worker.yaml" ]; then
  install -m 0640 "${owner[@]}" "$repo/deploy/systemd/worker.yaml" "$root/etc/push/worker.yaml"
  echo "installed /etc/push/worker.yaml (an example app for APNs, FCM, Huawei and Xiaomi): edit it (Redis, your apps;" \
    "delete the providers you do not use), and put each credential file it names in /etc/push/keys"
fi
# One environment file per instance, each with its own worker id and metrics port: two instances binding the
# same port, the second would exit. A port another environment file already names is skipped.
host="$(hostname -s 2>/dev/null || hostname)"
used_ports=" $(cat "$root"/etc/push/worker-*.env 2>/dev/null | sed -n 's/^METRICS_LISTEN=.*:\([0-9]*\)$/\1/p' | tr '\n' ' ' || true)"
port=9464
for n in $(seq 1 "$instances"); do
  env_file="$root/etc/push/worker-$n.env"
  [ -e "$env_file" ] && continue
  while [ "$port" -lt $((9463 + n)) ] || [[ "$used_ports" == *" $port "* ]]; do port=$((port + 1)); done
  printf 'WORKER_ID=%s-%s\nMETRICS_LISTEN=127.0.0.1:%s\n' "$host" "$n" "$port" > "$env_file"
  used_ports+="$port "
  chmod 0640 "$env_file"
  if [ "$staged" = 0 ]; then chown root:push "$env_file"; fi
  echo "installed /etc/push/worker-$n.env (WORKER_ID=$host-$n, METRICS_LISTEN=127.0.0.1:$port)"
done
install -d -m 0755 "$root/usr/share/doc/push-worker"
for doc in docs/deploy.md docs/operations.md config/worker.example.yaml; do
  install -m 0644 "$repo/$doc" "$root/usr/share/doc/push-worker/$(basename "$doc")"
done

if [ "$staged" = 0 ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi
echo "installed $("$root/usr/local/bin/worker" --version 2>/dev/null || echo worker) under ${root:-/}; next: edit /etc/push/worker.yaml," \
  "put the credential files it names in /etc/push/keys (install -o push -g push -m 0600 AuthKey_X.p8" \
  "firebase-service-account.json huawei-client-secret.txt xiaomi-app-secret.txt /etc/push/keys/)," \
  "check them with worker check-config --config /etc/push/worker.yaml, then systemctl enable --now push-worker@1 push-worker@2"
