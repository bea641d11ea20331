#!/usr/bin/env bash
# The tests that touch C libraries, threads and raw memory (the Redis client, the queue protocol, the collector,
# the transport, our HTTP/2 client, the message parser's word-at-a-time reads and byte sort, and the provider
# modules' lanes, token threads and libcurl requests) under a sanitizer: `address` (use-after-free, overflows in the C wrappers)
# or `thread` (data races between the dedicated threads and Swift concurrency).
# Usage: scripts/sanitize.sh address|thread [extra swift test arguments]
# Any sanitizer report fails the run. A test that fails its assertions under the sanitizer's slowdown is run
# once more on its own, and fails the run only if it fails again.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:?usage: scripts/sanitize.sh address|thread}"
shift
scripts/install-deps.sh
suites="${SANITIZE_FILTER:-RedisClientTests|QueueProtocolTests|CollectorTests|PusherTests|HTTP2ClientTests|PushCoreTests|FCMProviderTests|HuaweiProviderTests|XiaomiProviderTests|HonorProviderTests|OPPOProviderTests|VivoProviderTests|ProviderKitTests|AndroidPushKitTests}"
swift build --build-tests --scratch-path ".build-$kind" -Xswiftc "-sanitize=$kind"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Leaks found at exit are not reported: the process-wide singletons (metrics, libcurl's globals) live until
# exit by design. Every other finding stops the test process.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"
status=0
swift test --skip-build --scratch-path ".build-$kind" --filter "$suites" "$@" 2>&1 | tee "$log" || status=$?
if grep -qE "(Address|Thread)Sanitizer" "$log"; then
  echo "sanitize.sh: the $kind sanitizer reported a problem (above)" >&2
  exit 1
fi
[ "$status" -eq 0 ] && exit 0
failed=$(sed -nE "s/^Test Case '([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)' failed.*/\1\/\2/p" "$log" | sort -u | paste -sd'|' -)
if [ -z "$failed" ]; then
  echo "sanitize.sh: swift test failed (exit $status) without a failed test case: a crash" >&2
  exit "$status"
fi
echo "sanitize.sh: running again on their own: $failed" >&2
swift test --skip-build --scratch-path ".build-$kind" --filter "$failed" "$@"
