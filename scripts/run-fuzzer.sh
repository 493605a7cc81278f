#!/usr/bin/env bash
# Runs one libFuzzer target for a fixed time on a copy of its seed corpus and fails on
# any finding (crash, undefined behaviour, leak, timeout, memory beyond the limits).
#   run-fuzzer.sh FUZZER SEED_DIR SECONDS MAX_LEN [libFuzzer options...]
# The executions are appended to $RTCP_FUZZ_LOG (one line per run: date, target,
# executions, seconds); a finding's input is kept as $RTCP_BINARY_DIR/fuzz-findings/
# <target>-crash-... for a regression test (fuzz/README.md).
set -euo pipefail
fuzzer=$1 seeds=$2 seconds=$3 max_len=$4
shift 4
name=$(basename "$fuzzer")
findings=${RTCP_BINARY_DIR:-$PWD}/fuzz-findings
mkdir -p "$findings"
work=$(mktemp -d "${TMPDIR:-/tmp}/rtcp-$name-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$seeds"/* "$work/corpus/" 2>/dev/null || true
status=0
# -malloc_limit_mb: one allocation beyond what any of these small observations needs is
# a finding (a size from the input trusted); -timeout: one input taking 10 s is a hang.
"$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=1536 \
  -malloc_limit_mb=256 -print_final_stats=1 -artifact_prefix="$findings/$name-" "$@" \
  "$work/corpus" >"$work/log" 2>&1 || status=$?
executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
echo "$name: ${executions:-?} executions in $seconds s, exit status $status"
if [ -n "${RTCP_FUZZ_LOG:-}" ]; then
  echo "$(date -u +%FT%TZ) $name ${executions:-0} $seconds $status" >>"$RTCP_FUZZ_LOG"
fi
if [ "$status" -ne 0 ]; then
  tail -60 "$work/log"
  echo "$name: finding kept in $findings/" >&2
fi
exit "$status"
