#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs every test suite.
# The tests start their own redis-server and the APNs emulator (HTTP/2 + TLS) on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
