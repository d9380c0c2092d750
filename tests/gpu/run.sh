#!/usr/bin/env bash
# GPU checks for AttnScope, on a machine with an NVIDIA GPU, nvcc and a Python PyTorch with CUDA:
#   1. builds core, attnscope-cli and the tests without Qt against PyTorch's LibTorch
#      (CMAKE_PREFIX_PATH from torch.utils.cmake_prefix_path), with core's CUDA kernels;
#   2. runs the CUDA tests (tests/core/runtime/test_cuda.cpp: CPU and GPU maps agree, half precision
#      within the stated tolerances); where transformers is installed, tests/gpu/hf_check.py
#      compares the CLI's maps with transformers' own (eager attention) on tiny random models of
#      every family; the whole core suite (and, last, the CLI suite);
#   3. prints benchmark figures: open time, forward+capture on the GPU (F32/F16/BF16) and the
#      CPU for comparison, on random checkpoints written by bench/make_checkpoint.py;
#   4. long inputs (issue 13's Llama shape, 8,192... 32,768 positions): the blocked forward, the
#      144 thumbnails, detail/zoom/temperature and all-head metrics at 4,096 tokens, forwards at
#      16,384 and 32,768, PyTorch eager beside them; GPU memory sampled by nvidia-smi.
# Results go to $OUT (or the first argument, or ./gpu-results): log.txt, cuda-tests.txt,
# hf-check.txt, bench.txt, summary.txt. Record them in docs/benchmarks-log.md with the date and the GPU,
# and the latest figures in docs/benchmarks.md.
#
# Header-only dependencies the machine lacks (nlohmann-json, Catch2 v2) are taken from
# .gpu-deps/ when present (tests/gpu/stage_deps.sh fills it on a Debian machine).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-${OUT:-$root/gpu-results}}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
build=${ATTNSCOPE_GPU_BUILD_DIR:-$root/build-gpu}
models=${ATTNSCOPE_GPU_MODELS:-/tmp/attnscope-gpu-models}
py=${PYTHON:-python3}
failures=0
step() { echo; echo "== $*"; }
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

step "machine"
date -u +"%Y-%m-%d %H:%M UTC"
nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader || fail "nvidia-smi"
nvcc --version | tail -n 2 || fail "nvcc"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available(), "cxx11abi", torch.compiled_with_cxx11_abi())' ||
  { fail "python3 cannot import torch"; exit 1; }
torch_cmake=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
arch=${CMAKE_CUDA_ARCHITECTURES:-${cap:-90}}
prefix="$torch_cmake"
[ -d "$root/.gpu-deps" ] && prefix="$prefix;$root/.gpu-deps"

step "configure and build (CUDA architectures $arch)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# --no-as-needed keeps libtorch_cuda linked although no symbol of it is named directly;
# without it LibTorch reports no CUDA on toolchains that link --as-needed by default.
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DATTNSCOPE_BUILD_UI=OFF -DATTNSCOPE_BUILD_BENCHMARKS=OFF \
  -DATTNSCOPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_EXE_LINKER_FLAGS="-Wl,--no-as-needed" ||
  { fail "cmake configure"; exit 1; }
cmake --build "$build" --parallel "$(nproc)" --target attnscope_core_tests attnscope_internal_tests attnscope_cli_tests attnscope-cli ||
  { fail "build"; exit 1; }
cli=$build/app/attnscope-cli

step "CUDA tests (max |GPU map - CPU map| per family and dtype)"
"$build/tests/attnscope_core_tests" "[cuda]" 2>&1 | tee "$out/cuda-tests.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "CUDA tests"
grep -q "cuda-check" "$out/cuda-tests.txt" || fail "the CUDA tests did not run on a GPU (LibTorch sees no CUDA device?)"

step "CUDA kernels (fused softmax, additive scores, causal linear attention) against the CPU path"
"$build/tests/attnscope_internal_tests" "[cuda]" -s 2>&1 | tail -n 40 | tee "$out/cuda-kernels.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "CUDA kernel tests"
grep -q "REQUIRE( at::hasCUDA() )" "$out/cuda-kernels.txt" && fail "the CUDA kernel tests did not run on a GPU"
"$build/tests/attnscope_internal_tests" "[cuda-limits]" || fail "CUDA kernel limits"

step "Hugging Face transformers cross-check (tiny random models of every family)"
if "$py" -c 'import transformers, PIL' 2>/dev/null; then
  "$py" "$root/tests/gpu/hf_check.py" --cli "$cli" 2>&1 | tee "$out/hf-check.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "transformers cross-check"
else
  echo "transformers or Pillow not installed: skipped" | tee "$out/hf-check.txt"
fi

step "core tests (all)"
"$build/tests/attnscope_core_tests" || fail "core tests"
step "benchmarks"
mkdir -p "$models"
checkpoint() {  # family size dtype name
  [ -f "$models/$4/config.json" ] || "$py" "$root/bench/make_checkpoint.py" "$1" "$models/$4" --size "$2" --dtype "$3" || fail "make $4"
}
checkpoint gpt2 base F32 gpt2-f32
checkpoint gpt2 base F16 gpt2-f16
checkpoint llama 500mb F32 llama-f32
checkpoint llama base BF16 llama-bf16
checkpoint bert base F32 bert-f32
checkpoint vit base F16 vit-f16
{
  for m in gpt2-f32 gpt2-f16 llama-f32 llama-bf16 bert-f32 vit-f16; do
    size=$(du -sh "$models/$m" | cut -f1)
    start=$(date +%s%N)
    if "$cli" info "$models/$m" --device cuda >/dev/null; then
      end=$(date +%s%N)
      echo "open $m ($size) on cuda: $(( (end - start) / 1000000 )) ms (process start, CUDA init, load to GPU)"
    else
      fail "info $m"
    fi
    for seq in 512 2048; do
      case $m in bert-*) [ $seq -gt 512 ] && continue ;; vit-*) [ $seq -gt 512 ] && continue ;; esac
      "$cli" bench "$models/$m" --device cuda --seq $seq --repeat 10 --warmup 2 || fail "bench $m cuda $seq"
    done
  done
  "$cli" bench "$models/gpt2-f32" --device cpu --seq 512 --repeat 3 || fail "bench cpu"
  "$cli" bench "$models/llama-f32" --device cpu --seq 512 --repeat 3 || fail "bench cpu"
} >"$out/bench.txt" 2>&1  # not piped, so that fail() counts in this shell
cat "$out/bench.txt"

step "long inputs (docs/benchmarks.md, issue 13): blocked forward and pooled maps on the GPU"
# Peak GPU memory of a command: nvidia-smi's memory.used sampled every 100 ms (the process's
# reserved memory, CUDA context included), printed after its output.
gpuPeak() {
  local samples=$out/gpu-mem.$$ pid
  : >"$samples"
  (while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1 >>"$samples"; sleep 0.1; done) &
  pid=$!
  "$@"
  local rc=$?
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  echo "peak GPU memory used (nvidia-smi, 100 ms samples): $(sort -n "$samples" | tail -n 1) MiB"
  rm -f "$samples"
  return $rc
}
[ -f "$models/llama-long/config.json" ] ||
  "$py" "$root/bench/make_checkpoint.py" llama "$models/llama-long" --size 500mb --positions 32768 || fail "make llama-long"
{
  gpuPeak "$cli" bench "$models/llama-long" --device cuda --seq 4096 --repeat 3 --warmup 1 --thumbnails 48 --detail 512 \
    --metrics --rollout-rows 1 || fail "bench long 4096"
  gpuPeak "$py" "$root/bench/pytorch_llama.py" "$models/llama-long" --device cuda --seq 4096 --repeat 3 --warmup 1 ||
    fail "pytorch 4096"
  for seq in 16384 32768; do
    gpuPeak "$cli" bench "$models/llama-long" --device cuda --seq $seq --repeat 1 --warmup 1 --thumbnails 48 ||
      fail "bench long $seq"
    gpuPeak "$py" "$root/bench/pytorch_llama.py" "$models/llama-long" --device cuda --seq $seq --repeat 1 --warmup 1 ||
      echo "pytorch eager at $seq tokens failed (out of GPU memory?)"
  done
} >"$out/long.txt" 2>&1
cat "$out/long.txt"

step "summary"
{
  echo "date: $(date -u +%Y-%m-%d)"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1)"
  "$py" -c 'import torch; print("libtorch:", torch.__version__, "cuda", torch.version.cuda)'
  grep "cuda-check" "$out/cuda-tests.txt"
  grep "hf-check" "$out/hf-check.txt"
  grep -E "^open|forward\+capture" "$out/bench.txt"
  grep -E "forward\+capture|thumbnails|detail|metrics|rollout|peak GPU" "$out/long.txt"
  echo "failures before the CLI tests: $failures"
} | tee "$out/summary.txt"

# Last, since it is the slowest part (one process and CUDA start per case) and checks no GPU path
# the CUDA tests above do not.
step "CLI tests"
(cd "$build/tests" && ./attnscope_cli_tests) || fail "CLI tests"
echo "failures: $failures" | tee -a "$out/summary.txt"
exit $((failures > 0))
