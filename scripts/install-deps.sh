#!/usr/bin/env bash
# Installs the Debian packages the worker, its tests and its demo need, if they are missing.
# --bench adds what scripts/bench.sh compares against: nginx (the cheap HTTP/2 endpoint, at once or after --latency-ms with its echo module), h2load,
# Go with x/net/http2 (the Go peer sender) and python3-aioapns (the Python peer sender).
set -euo pipefail
packages=(redis-server redis-tools libhiredis-dev libcurl4-openssl-dev libnghttp2-dev libjemalloc-dev python3-h2 libssl-dev libicu-dev openssl pkg-config python3 curl)
# scripts/check-deploy.py (DeploymentFilesTests): kubectl renders the Kustomize overlays (Debian 12's
# kubernetes-client is kubectl 1.20; any kubectl already on PATH will do), python3-venv holds kubernetes-validate.
packages+=(python3-venv)
# scripts/check-alerts.sh: promtool (Debian's prometheus package) checks and unit-tests the alerting rules,
# python3-yaml reads their names. The package's own prometheus service is not needed and left as it is.
packages+=(prometheus python3-yaml)
command -v kubectl >/dev/null || packages+=(kubernetes-client)
if [ "${1:-}" = "--bench" ]; then
  packages+=(nginx-light libnginx-mod-http-echo nghttp2-client golang-go golang-golang-x-net-dev python3-aioapns)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts the packaged services; the tests and the demo start their own on loopback ports.
  $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
fi
# kubernetes-validate from PyPI into its virtualenv under ~/.cache, once, so that the tests need no download.
"$(dirname "$0")/check-deploy.py" --prepare
command -v swift >/dev/null || { echo "swift is not on PATH: install the Swift 6 toolchain first" >&2; exit 1; }
