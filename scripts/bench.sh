#!/usr/bin/env bash
# Benchmarks. Without --queue or --filter: the whole pipeline, Redis to an HTTP/2 endpoint (prints notifications/s,
# worker CPU per notification, Redis CPU per message, peak RSS, dead letters, a JSON line). Usage:
#   scripts/bench.sh --suite [--only abcdefghijkl] [--transports nghttp2,libcurl]   the standard workloads (a)-(l), each
#                    with both transports, h2load, Go and aioapns on (a): table + JSON; (k) and (l), nginx at 50 and
#                    150 ms with 1,000 streams per connection, also run h2load with the worker's connections and
#                    streams, the Go sender with 1,000 and 4,000 in flight, and the worker at 0 ms for the CPU bound
#                    (`--suite --only kl --transports nghttp2`)
#   scripts/bench.sh [--transport nghttp2|libcurl] [--goaway-after N] [--nginx-streams S] [--retries A]
#                    [--endpoint emulator|nginx] [--messages N] [--tokens T] [--kind private|group] [--uuid-group K]
#                    [--connections C] [--latency-ms L] [--workers W] [--max-streams S] [--collapse-on-error]
#                    [--failure-rate F] [--check-duplicates] [--rate R] [--idle S] [--peers] [--round-trip-peers]
#                    [--json FILE]   (every run prints the worker's requests in flight, median and peak, from /metrics)
#                    [--provider apns|fcm|both]   (FCM messages too: nginx answers FCM's send call, the emulator
#                    issues the access token; both: half each, and each provider's own rate from the same run)
#                    [--replica] [--wait-replicas N]   (one replica of the Redis; the worker waits for N replicas per
#                    acknowledgement)
#                    [--libcurl-dir DIR]   (the worker with another libcurl.so.4, e.g. bookworm-backports' 8.14)
#                    [--preload LIB]       (the worker with LIB preloaded, e.g. another malloc)
#                    [--broadcast bulk|queue|alone]  (the messages as a broadcast on push:queue:bulk, chat pushes at 50/s
#                    on push:queue beside it; queue: both on push:queue; alone: no chat)
#   scripts/bench.sh --vendor-capacity [--tokens N] [--latency-ms L] [--streams S]   a Huawei server at its capacity
#                    (answers after L ms, one connection of S streams): the worker's tokens/s against h2load's
#   scripts/bench.sh --queue [MEASURED]   Redis CPU per message of the queue protocol alone, 1k/20k/100k in flight
#   scripts/bench.sh --filter [ROUNDS]    the word filter's MB/s, 10,000-entry list on 1 KB texts
#   scripts/bench.sh --stages [MESSAGES]  CPU per message of parsing and merging, without Redis or HTTP/2
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
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
if [ "${1:-}" = "--stages" ]; then
  swift build -c release --product stage-benchmark 2>&1 | tail -1
  .build/release/stage-benchmark "${2:-200000}"
  exit 0
fi
if [ "${1:-}" = "--filter" ]; then
  swift build -c release --product filter-benchmark 2>&1 | tail -1
  .build/release/filter-benchmark "${2:-200}"
  exit 0
fi
swift build -c release --product worker 2>&1 | tail -1
swift build -c release --product push-emulator 2>&1 | tail -1
if [ "${1:-}" = "--vendor-capacity" ]; then
  shift
  exec python3 scripts/bench-vendor.py .build/release/worker .build/release/push-emulator "$@"
fi
# The Go peer sender, built with Debian's Go and x/net (no module download).
mkdir -p .build/peers
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$PWD/.build/peers/cache" \
  go build -o .build/peers/go-sender ./Benchmarks/Peers/go-sender
python3 scripts/bench.py "$@"
