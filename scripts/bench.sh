#!/usr/bin/env bash
# Benchmark of the whole pipeline against the local APNs emulator: prints notifications/s and CPU per
# notification. Usage: scripts/bench.sh [--messages N] [--tokens T] [--kind private|group] [--connections C] [--latency-ms L]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product worker 2>&1 | tail -1
swift build -c release --product apns-emulator 2>&1 | tail -1
python3 scripts/bench.py "$@"
