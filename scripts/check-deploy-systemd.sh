#!/usr/bin/env bash
# Checks the systemd deployment as written: deploy/systemd/install.sh staged into a temporary DESTDIR
# (no user created, nothing outside the directory touched) installs everything the unit refers to (the binary
# ExecStart runs, the configuration, the documents Documentation= names, and for every instance the unit's
# header starts a required EnvironmentFile with its own WORKER_ID and metrics port),
# creates the user the unit runs as, and `systemd-analyze verify` (Debian's systemd; it needs no running
# systemd) finds nothing to say about the unit. The installed configuration loads with the worker's own loader
# (`worker check-config`), has apps of every provider (APNs, FCM, Huawei, Xiaomi), and every credential file it
# names lies in /etc/push/keys, the directory install.sh makes for them (0750: the push group reads it, nobody
# else). Exit 0 when all holds, 1 with the reasons otherwise.
#   scripts/check-deploy-systemd.sh [WORKER_BINARY]      (default: the debug build's worker)
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-$(swift build --show-bin-path)/worker}"
unit=deploy/systemd/push-worker@.service
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

DESTDIR="$stage" deploy/systemd/install.sh --binary "$binary" >/dev/null || fail "install.sh exited $?"

exec_path="$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")"
[ -x "$stage$exec_path" ] || fail "ExecStart runs $exec_path, which install.sh does not install"
"$stage$exec_path" --version >/dev/null 2>&1 || fail "the installed $exec_path does not run (--version)"
user="$(sed -n 's/^User=//p' "$unit")"
grep -Eq "useradd .*[[:space:]]$user\$" deploy/systemd/install.sh || fail "the unit runs as $user, whom install.sh does not create"
grep -Eq "getent passwd $user" deploy/systemd/install.sh || fail "install.sh does not check for an existing $user"
env_file="$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")"
grep -q '^EnvironmentFile=-' "$unit" && fail "EnvironmentFile= is optional: an instance without its file would take worker.yaml's metrics port"
# Every instance the unit's header starts (systemctl enable --now push-worker@1 push-worker@2) has an
# environment file of its own, with its own WORKER_ID and METRICS_LISTEN: two instances on one port, the second
# could not listen.
instances="$(sed -n 's/^#.*enable --now //p' "$unit" | grep -o 'push-worker@[A-Za-z0-9_-]*' | sed 's/^push-worker@//' | sort -u)"
[ "$(echo "$instances" | grep -c .)" -ge 2 ] || fail "the unit's header does not start two instances"
seen_listen=""; seen_id=""
for instance in $instances; do
  file="$stage${env_file//%i/$instance}"
  if [ ! -f "$file" ]; then fail "EnvironmentFile $env_file of instance $instance is not installed"; continue; fi
  listen="$(sed -n 's/^METRICS_LISTEN=//p' "$file")"
  id="$(sed -n 's/^WORKER_ID=//p' "$file")"
  [ -n "$listen" ] || fail "instance $instance: no METRICS_LISTEN in ${env_file//%i/$instance}"
  [ -n "$id" ] || fail "instance $instance: no WORKER_ID in ${env_file//%i/$instance}"
  case " $seen_listen " in *" ${listen##*:} "*) fail "instance $instance: metrics port ${listen##*:} is another instance's" ;; esac
  case " $seen_id " in *" $id "*) fail "instance $instance: WORKER_ID $id is another instance's" ;; esac
  seen_listen+=" ${listen##*:}"; seen_id+=" $id"
done
config="$(sed -n 's/^ExecStart=.*--config \([^ ]*\).*/\1/p' "$unit")"
[ -f "$stage$config" ] || fail "the configuration $config is not installed"
[ -f "$stage/etc/push/worker.example.yaml" ] || fail "the configuration example is not installed"
docs="$(sed -n 's/^Documentation=//p' "$unit")"
[ -n "$docs" ] || fail "the unit has no Documentation="
for url in $docs; do
  case "$url" in
    file://*) [ -f "$stage${url#file://}" ] || fail "Documentation= $url is not installed" ;;
    *) ;;
  esac
done
# The configuration install.sh puts in place, read by the worker itself: check-config loads it (an unknown key or a
# bad value is a "configuration" failure) and names each app's credential file when it cannot read it. The copy it
# reads has /etc/push/keys pointed at the stage's own, empty, keys directory: every credential is then missing
# for certain (a real /etc/push/keys on this machine is never read, and no provider is asked for a token), and
# each failure names its file. Redis: a free loopback port nothing listens on; the environment is emptied, so that
# no variable of the caller's (REDIS_URL, APNS_APPS_0_KEY_FILE, ...) replaces what the file says.
keys_dir="$stage/etc/push/keys"
[ -d "$keys_dir" ] && [ "$(stat -c %a "$keys_dir")" = 750 ] || fail "install.sh does not make /etc/push/keys with mode 0750"
sed "s|/etc/push/keys/|$keys_dir/|g" "$stage$config" > "$stage/check-config.yaml"
closed_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
report="$(env -i PATH="$PATH" REDIS_URL="redis://127.0.0.1:$closed_port/0" \
  "$stage$exec_path" check-config --config "$stage/check-config.yaml" --json --redis-timeout 1 2>/dev/null || true)"
if ! problems="$(python3 - "$keys_dir" "$report" <<'PY'
import json, sys
keys_dir, report = sys.argv[1], sys.argv[2]
try:
    checks = json.loads(report)["checks"]
except (ValueError, KeyError):
    sys.exit("worker check-config printed no JSON report: %r" % report[:200])
problems = []
for check in checks:
    name, detail = check["name"], check.get("detail", "")
    if name == "configuration" and not check["ok"]:
        problems.append("the installed configuration does not load: " + detail)
    elif ".apps." in name and keys_dir + "/" not in detail:
        problems.append("%s: its credential is not a file in /etc/push/keys (%s)" % (name, detail))
for provider in ("apns", "fcm", "huawei", "xiaomi"):
    if not any(check["name"].startswith(provider + ".apps.") for check in checks):
        problems.append("the installed configuration has no %s app" % provider)
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
)"; then
  while IFS= read -r problem; do fail "$problem"; done <<<"$problems"
fi

timeout_stop="$(sed -n 's/^TimeoutStopSec=//p' "$unit")"
[ "${timeout_stop:-0}" -ge 35 ] || fail "TimeoutStopSec=$timeout_stop is shorter than shutdown.timeout_s (25) plus 10 s"

if command -v systemd-analyze >/dev/null; then
  # verify wants an instance and an ExecStart that exists on this machine: instance 1 of the unit, with the
  # binary where install.sh staged it. Any output (unknown keys, bad values) is a failure: verify itself
  # exits 0 on those warnings.
  verify_dir="$stage/verify"
  mkdir -p "$verify_dir"
  sed "s|^ExecStart=$exec_path|ExecStart=$stage$exec_path|" "$unit" > "$verify_dir/push-worker@1.service"
  if ! output="$(systemd-analyze verify "$verify_dir/push-worker@1.service" 2>&1)" || [ -n "$output" ]; then
    fail "systemd-analyze verify: ${output:-exit status non-zero}"
  fi
else
  echo "check-deploy-systemd: no systemd-analyze here (Debian package systemd): static checks only"
fi

if [ "$failures" -gt 0 ]; then
  echo "check-deploy-systemd: $failures failures"
  exit 1
fi
echo "check-deploy-systemd: install.sh stages the binary, user, configuration (apps of APNs, FCM, Huawei and Xiaomi, credentials in" \
  "/etc/push/keys), documents and the environment files (instances" $instances "on metrics ports"$seen_listen") the unit names;" \
  "systemd-analyze verify is silent"
