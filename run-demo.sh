#!/usr/bin/env bash
# Sets up (packages, build) and runs the demo observation of parsets/demo.parset.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/setup.sh"
build=${RTCP_BUILD_DIR:-$top/build}
out=${RTCP_DEMO_DIR:-$top/demo-output}
mkdir -p "$out"
"$build/station-sim/station-sim" "$top/parsets/demo.parset" --record "$out/recordings" --duration 4
ls -l "$out/recordings"
