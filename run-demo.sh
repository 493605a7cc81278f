#!/usr/bin/env bash
# Sets up (packages, build) and runs the demo observation of parsets/demo.parset: 30 s of
# 8 simulated LBA stations, 8 subbands of 64 channels, starting a few seconds from now,
# through station-sim -> ionproc -> mpirun correlator -> storage-sink. Prints where the
# MeasurementSets, plots and summary are. Extra arguments go to observe (e.g. --ranks 1).
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/setup.sh"
build=${RTCP_BUILD_DIR:-$top/build}
cd "$top"  # the demo parset writes to demo-output/ relative to here
rm -rf demo-output/L1001
"$build/observe/observe" parsets/demo.parset --now "$@"
echo
echo "MeasurementSets: $top/demo-output/L1001/L1001_SAP000_SB00[0-7]_uv.MS"
echo "plots:           $top/demo-output/L1001/plots/"
echo "summary:         $top/demo-output/L1001/summary.txt"
echo "image it:        wsclean -size 512 512 -scale 1amin -name demo-output/L1001/image demo-output/L1001/*.MS"
