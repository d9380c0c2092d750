#!/bin/sh
# Builds core and the internal tests against a CUDA-enabled LibTorch and runs the [cuda] checks
# (the CUDA kernels against the CPU path). Run on a machine with a GPU and nvcc:
#   TORCH_PREFIX=/path/to/libtorch tests/gpu/run.sh [BUILD_DIR]
# Without a GPU the [cuda] test cases only warn; this script then fails on purpose, since its
# point is to run them.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$src/build-gpu"}
prefix=${TORCH_PREFIX:+-DCMAKE_PREFIX_PATH=$TORCH_PREFIX}
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_BUILD_UI=OFF \
  -DATTNSCOPE_BUILD_BENCHMARKS=OFF -DATTNSCOPE_CUDA=ON $prefix
cmake --build "$build" -j"$(nproc)" --target attnscope_internal_tests
out=$("$build/tests/attnscope_internal_tests" "[cuda]" -s 2>&1) || { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out" | tail -n 3
if printf '%s\n' "$out" | grep -q "no CUDA device"; then
  echo "tests/gpu/run.sh: no CUDA device visible to LibTorch; the [cuda] checks did not run" >&2
  exit 1
fi
