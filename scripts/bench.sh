#!/usr/bin/env bash
# Benchmarks. Without --queue: the whole pipeline against the local APNs emulator (prints notifications/s,
# worker CPU per notification and Redis CPU per message). Usage:
#   scripts/bench.sh [--messages N] [--tokens T] [--kind private|group] [--connections C] [--latency-ms L] [--workers W]
#                    [--max-streams S] [--check-duplicates] [--rate R]   (R: enqueue paced, print queue-to-APNs p50/p99)
#   scripts/bench.sh --queue [MEASURED]   Redis CPU per message of the queue protocol alone, 1k/20k/100k in flight
#   scripts/bench.sh --filter [ROUNDS]    the word filter's MB/s, 10,000-entry list on 1 KB texts
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ "${1:-}" = "--queue" ]; then
  swift build -c release --product queue-benchmark 2>&1 | tail -1
  dir=$(mktemp -d)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --daemonize yes --logfile "$dir/redis.log"
  trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
  sleep 0.5
  .build/release/queue-benchmark "$port" "${2:-100000}"
  exit 0
fi
if [ "${1:-}" = "--filter" ]; then
  swift build -c release --product filter-benchmark 2>&1 | tail -1
  .build/release/filter-benchmark "${2:-200}"
  exit 0
fi
swift build -c release --product worker 2>&1 | tail -1
swift build -c release --product apns-emulator 2>&1 | tail -1
python3 scripts/bench.py "$@"
