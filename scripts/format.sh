#!/usr/bin/env bash
# Formats the project's C++ and CUDA sources with clang-format (.clang-format at the top).
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  list files that are not formatted; exit 1 if any
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    clang-format --style=file "$f" | cmp -s - "$f" || { echo "$f"; bad=1; }
  done
  exit $bad
fi
clang-format --style=file -i "${files[@]}"
