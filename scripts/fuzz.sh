#!/usr/bin/env bash
# Fuzzes the queue-element parser with libFuzzer for a bounded time (default 60 s; `scripts/fuzz.sh 600`
# for ten minutes). The seed corpus is Fuzz/corpus/message; what a run discovers goes to a scratch folder
# (scripts/fuzz.sh --merge folds it back into the repo's corpus, keeping only inputs that add coverage;
# scripts/fuzz.sh --build-only builds the fuzzer and stops).
# A crash leaves crash-* / timeout-* files here and exits non-zero; replay one with
# `.build/debug/message-fuzzer FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
merge=0
build_only=0
for arg in "$@"; do
  case "$arg" in
    --merge) merge=1 ;;
    --build-only) build_only=1 ;;
    *) seconds="$arg" ;;
  esac
done
scratch=.build-fuzz
swift build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --product message-fuzzer --scratch-path "$scratch" 2>&1 | tail -n 3
[ "$build_only" -eq 1 ] && exit 0
fuzzer="$scratch/release/message-fuzzer"
found="$scratch/found"
mkdir -p "$found"
# -rss_limit_mb bounds memory; -timeout flags any single input that takes over 5 s (a hang).
# The fuzzer's status is read from PIPESTATUS straight after the pipeline: an `|| true` there (as this script
# once had) runs exactly when the fuzzer fails, under pipefail, and leaves PIPESTATUS saying 0.
set +e
SWIFT_BACKTRACE=enable=no "$fuzzer" "$found" Fuzz/corpus/message -max_total_time="$seconds" -max_len=16384 -timeout=5 -rss_limit_mb=2048 \
  -print_final_stats=1 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|INFO: seed corpus|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)|property violated|deadly signal"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "fuzz: FAILED (exit $status); see crash-*/timeout-* files" >&2
  exit "$status"
fi
if [ "$merge" -eq 1 ]; then
  "$fuzzer" -merge=1 Fuzz/corpus/message "$found" 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true
fi
echo "fuzz: no property violated in ${seconds} s"
