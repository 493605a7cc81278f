#!/usr/bin/env bash
# Sets up (packages, build) and runs the whole test suite. Extra arguments go to ctest,
# e.g. ./run-tests.sh -L unit
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/setup.sh"
cd "${RTCP_BUILD_DIR:-$top/build}"
ctest --output-on-failure --timeout 900 "$@"
