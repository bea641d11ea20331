#!/usr/bin/env bash
# The tests that touch C libraries and threads (the Redis client, the queue protocol, the collector, the
# transport and our HTTP/2 client) under a sanitizer: `address` (use-after-free, overflows, leaks of the
# C wrappers) or `thread` (data races between the dedicated threads and Swift concurrency).
# Usage: scripts/sanitize.sh address|thread [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:?usage: scripts/sanitize.sh address|thread}"
shift
scripts/install-deps.sh
suites="${SANITIZE_FILTER:-RedisClientTests|QueueProtocolTests|CollectorTests|PusherTests|HTTP2ClientTests}"
swift build --build-tests --scratch-path ".build-$kind" -Xswiftc "-sanitize=$kind"
# Leaks found at exit are reported but not fatal: the process-wide singletons (metrics, libcurl's globals)
# live until exit by design.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}" \
  swift test --skip-build --scratch-path ".build-$kind" --filter "$suites" "$@"
