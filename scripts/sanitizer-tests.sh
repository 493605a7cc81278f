#!/usr/bin/env bash
# Builds rtcp with AddressSanitizer, LeakSanitizer and UBSan (Debug, into build-asan/ or
# $RTCP_BUILD_DIR) and runs every test that an instrumented build can keep up with:
# tests labelled `realtime` simulate more stations in real time than it can generate.
# Extra arguments go to ctest.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export RTCP_BUILD_DIR=${RTCP_BUILD_DIR:-$top/build-asan}
RTCP_BUILD_TYPE=Debug "$top/scripts/setup.sh" -DRTCP_SANITIZE=ON
cd "$RTCP_BUILD_DIR"
ctest --output-on-failure --timeout 900 -LE realtime "$@"
