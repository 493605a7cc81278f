#!/usr/bin/env bash
# Fails (exit 1) when clang-format, with the project's .clang-format, would change a C++
# file of the tree, and names the files; `--fix` formats them in place instead. The tree
# is formatted with Debian 12's clang-format 14 (scripts/setup.sh installs it); another
# version may format a few constructs differently, so it is refused unless
# RTCP_ANY_CLANG_FORMAT=1. CLANG_FORMAT overrides the executable.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *) echo "usage: scripts/check-format.sh [--fix]" >&2; exit 2 ;;
esac

format=${CLANG_FORMAT:-clang-format}
if ! command -v "$format" >/dev/null; then
  echo "check-format: $format not found (scripts/setup.sh installs clang-format)" >&2
  exit 2
fi
version=$("$format" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$version" != 14 ] && [ "${RTCP_ANY_CLANG_FORMAT:-0}" != 1 ]; then
  echo "check-format: $format is version $version; the tree is formatted with clang-format 14" \
       "(Debian 12). RTCP_ANY_CLANG_FORMAT=1 checks anyway." >&2
  exit 2
fi

# The project's own C++ sources; the patched casacore header is casacore's code.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cc' '*.h' ':!:common/casacore-cxx20/*')
else
  mapfile -t files < <(find . -path ./common/casacore-cxx20 -prune -o -path './build*' -prune \
                            -o \( -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
fi

if ((fix)); then
  "$format" -i --style=file -- "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi

# One run over every file; each violation is reported as "FILE:LINE:COLUMN: error: ...".
status=0
report=$("$format" --style=file --dry-run --Werror -- "${files[@]}" 2>&1) || status=$?
mapfile -t unformatted < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: .*clang-format-violations.*/\1/p' <<<"$report" | sort -u)
if ((status)) && ((${#unformatted[@]} == 0)); then
  echo "check-format: $format failed:" >&2
  echo "$report" >&2
  exit 2
fi
if ((${#unformatted[@]})); then
  echo "check-format: ${#unformatted[@]} of ${#files[@]} files are not formatted as .clang-format says:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "check-format: run scripts/check-format.sh --fix (clang-format $version)" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
