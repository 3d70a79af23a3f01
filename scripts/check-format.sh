#!/usr/bin/env bash
# Checks that every C++ and CUDA source git tracks is formatted as .clang-format says (clang-format 14,
# Debian's, as scripts/install-deps.sh installs it). Exit 0 when all are; 1 otherwise, naming each file
# and the first lines that differ, with the command that fixes them. A CI stage (.ci/run), before the build.
#   scripts/check-format.sh          check
#   scripts/check-format.sh --fix    rewrite the files in place
set -euo pipefail
cd "$(dirname "$0")/.."

clang_format="${CLANG_FORMAT:-clang-format}"
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check-format: $clang_format not found; scripts/install-deps.sh installs it (Debian package clang-format)" >&2
  exit 2
fi
fix=0
case "${1:-}" in
  "") ;;
  --fix) fix=1 ;;
  *) echo "usage: scripts/check-format.sh [--fix]" >&2; exit 2 ;;
esac

# Tracked sources only: fuzz corpora and third-party headers under .deps are data, not our code.
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' | grep -v '^tests/fuzz/\(corpus\|regressions\)/')
if [ "$fix" -eq 1 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$clang_format" -i
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi

bad=0
for f in "${files[@]}"; do
  if ! diff_out=$("$clang_format" "$f" | diff -u "$f" - 2>&1); then
    bad=$((bad + 1))
    echo "check-format: $f is not formatted; first differences:"
    printf '%s\n' "$diff_out" | sed -n '3,14p'
  fi
done
if [ "$bad" -ne 0 ]; then
  echo "check-format: $bad of ${#files[@]} files differ from .clang-format; run scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: all ${#files[@]} C++/CUDA sources formatted"
