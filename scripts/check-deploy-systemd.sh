#!/usr/bin/env bash
# Checks the systemd deployment as written: deploy/systemd/install.sh staged into a temporary DESTDIR
# (no user created, nothing outside the directory touched) installs everything the unit refers to (the binary
# ExecStart runs, the EnvironmentFile of instance 1, the configuration, the documents Documentation= names),
# creates the user the unit runs as, and `systemd-analyze verify` (Debian's systemd; it needs no running
# systemd) finds nothing to say about the unit. Exit 0 when all holds, 1 with the reasons otherwise.
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
[ -f "$stage${env_file//%i/1}" ] || fail "EnvironmentFile $env_file of instance 1 is not installed"
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
echo "check-deploy-systemd: install.sh stages the binary, user, configuration, environment file and documents the unit names; systemd-analyze verify is silent"
