#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs every test suite (in parallel
# processes), then fuzzes the message parser for FUZZ_SECONDS (default 60; 0 skips it). Arguments go to
# `swift test` (e.g. --filter X) instead, run one test at a time, and such a run skips the fuzzing.
# The tests start their own redis-server and the emulator (HTTP/2 + TLS) on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
# Every file the build and the tests make (the compiler's scratch files, logs, Redis data, keys, figures) goes under
# one folder of the temporary directory, removed when this script ends however it ends: a run leaves nothing behind.
run_tmp=$(mktemp -d -t push-tests.XXXXXXXX)
export TMPDIR="$run_tmp"
fuzz_build=""
trap 'if [ -n "$fuzz_build" ]; then kill "$fuzz_build" 2>/dev/null || true; fi; rm -rf "$run_tmp"' EXIT
swift build --build-tests
if [ $# -eq 0 ]; then
  if [ "${FUZZ_SECONDS:-60}" != "0" ]; then
    # The fuzzer's release build (a scratch folder of its own) goes beside the tests, which leave part of a
    # core idle; it must not outlive this script.
    fuzz_log=$(mktemp)
    scripts/fuzz.sh --build-only > "$fuzz_log" 2>&1 &
    fuzz_build=$!
  fi
  # Every test in a process of its own, TEST_WORKERS (4) at a time: most of a test's time is spent waiting on
  # the servers and workers it starts (each on free ports, in a directory of its own), so more processes than
  # cores still shortens the run (13 min serially on two cores, about 5 min this way).
  # The parallel runner shows only failing tests' output: the figures tests measure are gathered and shown here.
  figures=$(mktemp)
  PUSH_TEST_FIGURES="$figures" swift test --skip-build --parallel --num-workers "${TEST_WORKERS:-4}"
  echo "Figures the tests measured:"
  sort "$figures"
else
  swift test --skip-build "$@"
fi
if [ $# -eq 0 ]; then
  # What Swift's runner does not cover: the schema against its examples, the alerting rules (promtool), the
  # producer examples against a real worker and the emulator.
  python3 scripts/check-schema.py
  scripts/check-alerts.sh
  scripts/test-producers.sh .build/debug/worker .build/debug/push-emulator
fi
if [ $# -eq 0 ] && [ "${FUZZ_SECONDS:-60}" != "0" ]; then
  if ! wait "$fuzz_build"; then
    cat "$fuzz_log"
    echo "fuzz: the fuzzer did not build" >&2
    exit 1
  fi
  scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
