#!/usr/bin/env bash
# Installs the Debian packages the worker, its tests and its demo need, if they are missing. It never stops,
# disables or reconfigures a service already on the machine: the tests and the demo start their own
# redis-server (and emulator) on free loopback ports, beside any packaged one.
# --tests (scripts/test.sh) also makes scripts/check-deploy.py's virtualenv, with kubernetes-validate from PyPI:
# the demo fetches nothing but Debian packages and the Swift dependencies.
# --bench adds what scripts/bench.sh compares against: nginx (the cheap HTTP/2 endpoint, at once or after --latency-ms with its echo module), h2load,
# Go with x/net/http2 (the Go peer sender) and python3-aioapns (the Python peer sender).
# --image adds what scripts/image.sh and scripts/test-image.sh need to build and run the container image without
# a registry: debootstrap and the archive's keyring (the base), buildah (the image), podman with the runc runtime
# (crun, podman's other choice, refuses some cgroup layouts) and uidmap.
set -euo pipefail
packages=(redis-server redis-tools libhiredis-dev libcurl4-openssl-dev libnghttp2-dev libjemalloc-dev python3-h2 libssl-dev libicu-dev openssl pkg-config python3 curl)
# scripts/check-deploy.py (DeploymentFilesTests): kubectl renders the Kustomize overlays and components, which
# needs kubectl 1.21 or later on PATH (Debian 12's kubernetes-client, kubectl 1.20, is too old: the script says
# so); python3-venv holds kubernetes-validate.
packages+=(python3-venv)
bench=0; tests=0; image=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    --tests) tests=1 ;;
    --image) image=1 ;;
    *) echo "install-deps.sh: unknown argument $arg (--tests, --bench, --image)" >&2; exit 2 ;;
  esac
done
if [ "$tests" = 1 ]; then
  # scripts/check-schema.py: validates schema/examples against schema/message.schema.json.
  packages+=(python3-jsonschema)
  # examples/producers (scripts/test-producers.sh): the Python, Go, Node.js and PHP Redis clients, from Debian.
  packages+=(python3-redis golang-go golang-github-gomodule-redigo-dev node-redis php-cli php-redis)
  command -v node >/dev/null || packages+=(nodejs)
  # scripts/check-alerts.sh: promtool (Debian's prometheus package) checks and unit-tests the alerting rules,
  # python3-yaml reads their names. The package's own prometheus service is not needed and left as it is.
  packages+=(prometheus python3-yaml)
fi
if [ "$image" = 1 ]; then
  packages+=(debootstrap debian-archive-keyring buildah podman runc uidmap)
fi
if [ "$bench" = 1 ]; then
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
fi
# Tests only: kubernetes-validate from PyPI into its virtualenv under ~/.cache, once, so that the tests need no
# download.
if [ "$tests" = 1 ]; then
  "$(dirname "$0")/check-deploy.py" --prepare
fi
command -v swift >/dev/null || { echo "swift is not on PATH: install the Swift 6 toolchain first" >&2; exit 1; }
