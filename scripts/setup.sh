#!/usr/bin/env bash
# Installs every Debian package rtcp needs (when missing) and builds it into build/
# (or $RTCP_BUILD_DIR). Extra arguments go to cmake's configure step; `--packages-only`
# as the first argument installs the packages and stops.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RTCP_BUILD_DIR:-$top/build}

packages=(build-essential cmake pkg-config git clang-format clang
  casacore-dev casacore-tools casacore-data casacore-data-jpl-de200 libfftw3-dev
  libboost-dev libboost-program-options-dev libhdf5-dev
  mpich libmpich-dev libcppunit-dev
  python3-casacore python3-numpy python3-matplotlib python3-h5py
  wsclean aoflagger aoflagger-dev
  libssl-dev
  iproute2 util-linux mount
  chromium
  qemu-user)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Debian installs the JPL ephemerides (the Sun's, Moon's and planets' positions for beams
# that track them) in /usr/share/casacore/data but, unlike the other casacore-data tables,
# links them not where its casacore looks (/var/lib/casacore/data): link them there.
for table in DE200 DE405; do
  target=/var/lib/casacore/data/ephemerides/$table
  if [ -d "/usr/share/casacore/data/ephemerides/$table" ] && [ -d "$(dirname "$target")" ] && [ ! -e "$target" ]; then
    echo "setup: linking $target" >&2
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo ln -s "/usr/share/casacore/data/ephemerides/$table" "$target"
  fi
done
# POSIX shared memory in 2 MB pages: ionproc lends the ranks its station buffer in place
# only then (a ring of 4 KB pages is read at a quarter of the speed on a paravirtualised
# guest), and its block slots fill faster. Skipped where /dev/shm cannot be remounted.
# The last mount on /dev/shm is the one in effect (containers stack them), as ionproc reads it.
if [ "$(id -u)" -eq 0 ] && ! awk '$2 == "/dev/shm" { o = $4 } END { exit o !~ /huge=(advise|within_size|always)/ }' /proc/mounts; then
  if mount -o remount,huge=advise /dev/shm 2>/dev/null; then
    echo "setup: /dev/shm remounted with huge=advise" >&2
  else
    echo "setup: /dev/shm could not be remounted with huge=advise; ionproc copies blocks" >&2
  fi
fi
if [ "${1:-}" = --packages-only ]; then exit 0; fi

cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=${RTCP_BUILD_TYPE:-RelWithDebInfo} "$@" >&2
cmake --build "$build" -j "$(nproc)" >&2
