#!/usr/bin/env bash
# Copies the header-only build dependencies that a GPU machine may lack (nlohmann-json, Catch2 v2)
# from this Debian machine into .gpu-deps/ (git-ignored), laid out as a CMake prefix, so that
# tests/gpu/run.sh can find them there (carry .gpu-deps along with the working tree).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deps=$root/.gpu-deps
rm -rf "$deps"
mkdir -p "$deps/include" "$deps/share/cmake" "$deps/lib/cmake"
cp -r /usr/include/nlohmann "$deps/include/"
cp -r /usr/share/cmake/nlohmann_json "$deps/share/cmake/"
cp -r /usr/include/catch2 "$deps/include/"
cp -r /usr/lib/cmake/Catch2 "$deps/lib/cmake/"
# Catch2's exported targets name this library; the tests never link it (they have their own main).
cp /usr/lib/libCatch2WithMain.a "$deps/lib/" 2>/dev/null || : > "$deps/lib/libCatch2WithMain.a"
du -sh "$deps"
