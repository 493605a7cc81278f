#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan, UBSan, coverage) into build-fuzz/ (or
# $RTCP_FUZZ_BUILD_DIR) and runs each for a fixed time on its seed corpus (ctest -L fuzz),
# failing on any finding. CI runs it with the default 25 s per target.
#   scripts/fuzz.sh                 # 25 s per target
#   scripts/fuzz.sh --seconds 3600  # the long run (fuzz/README.md)
# Executions per run are appended to BUILD/fuzz-executions.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RTCP_FUZZ_BUILD_DIR:-$top/build-fuzz}
seconds=25
if [ "${1:-}" = --seconds ]; then
  seconds=$2
  shift 2
fi
"$top/scripts/setup.sh" --packages-only
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTCP_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRTCP_FUZZ_SECONDS="$seconds" "$@" >&2
cmake --build "$build" -j "$(nproc)" --target fuzzers >&2
cd "$build"
ctest --output-on-failure -L fuzz
