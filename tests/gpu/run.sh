#!/usr/bin/env bash
# GPU checks for AttnScope, on a machine with an NVIDIA GPU, nvcc and a Python PyTorch with CUDA
# (the lent H200: one call of the device tool; figures in docs/benchmarks.md, "GPU"):
#   1. builds core, attnscope-cli and the core tests without Qt against PyTorch's LibTorch
#      (CMAKE_PREFIX_PATH from torch.utils.cmake_prefix_path; C++20, which LibTorch 2.11 needs),
#      with core's CUDA kernels, while the benchmark checkpoints are written;
#   2. the CUDA tests (tests/core/runtime/test_cuda.cpp: CPU and GPU maps agree in every dtype),
#      the CUDA kernels against the CPU path, and tests/gpu/hf_check.py: the CLI's maps against
#      transformers' eager attention on tiny random models of every family, on the CPU and GPU;
#   3. figures: the kernels' achieved bandwidth against a device-to-device copy
#      (tests/internal/cuda_kernel_rates.cpp), open time and forward + capture of GPT-2 small
#      (512, 1,024 tokens) and the Llama long-input shape (512 ... 16,384 tokens) in F32 and BF16,
#      each beside transformers on the same checkpoint (bench/hf_peer.py: eager with
#      output_attentions, and SDPA without maps), GPU memory sampled by nvidia-smi; the
#      overview/detail/metrics steps at 4,096 tokens.
# Each stage runs only while the time budget (ATTNSCOPE_GPU_BUDGET_S, 470 s) lasts, most important
# first, so that a call of the device tool returns with time for a rerun.
# Results go to $OUT (or the first argument, or ./gpu-results), at most eight files: log.txt,
# build.txt, cuda-tests.txt, cuda-kernels.txt, hf-check.txt, rates.txt, bench.txt, summary.txt.
# Record them in docs/benchmarks.md with the date and the GPU.
#
# What the machine may lack to build core (nlohmann-json, Catch2 v2, PCRE2, utf8proc,
# SentencePiece, pkg-config) is taken from .gpu-deps/ when present (tests/gpu/stage_deps.sh).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-${OUT:-$root/gpu-results}}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
build=${ATTNSCOPE_GPU_BUILD_DIR:-$root/build-gpu}
models=${ATTNSCOPE_GPU_MODELS:-/tmp/attnscope-gpu-models}
budget=${ATTNSCOPE_GPU_BUDGET_S:-470}
# all: the whole benchmark matrix; quick: AttnScope's side of the targets alone (GPT-2 at 1,024,
# Llama at 4,096 and 16,384 tokens), after a change to the forward; overview: only the overview
# steps at 4,096 tokens (a rerun after a kernel change); none.
benchmarks=${ATTNSCOPE_GPU_BENCH:-all}
py=${PYTHON:-python3}
failures=0
skipped=()
SECONDS=0
step() { echo; echo "== [${SECONDS}s] $*"; }
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# True while the budget lasts; else records the stage as skipped.
within() { [ "$SECONDS" -lt "$budget" ] && return 0; echo "SKIPPED (budget of ${budget}s spent): $*"; skipped+=("$*"); return 1; }

step "machine"
date -u +"%Y-%m-%d %H:%M UTC"
nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader || fail "nvidia-smi"
nvcc --version | tail -n 2 || fail "nvcc"
"$py" -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available(), "transformers", transformers.__version__)' ||
  { fail "python3 cannot import torch and transformers"; exit 1; }
torch_cmake=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
arch=${CMAKE_CUDA_ARCHITECTURES:-${cap:-90}}
prefix="$torch_cmake"
deps=$root/.gpu-deps
if [ -d "$deps" ]; then
  prefix="$prefix;$deps"
  export PKG_CONFIG_PATH="$deps/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  command -v pkg-config >/dev/null || export PKG_CONFIG="$deps/bin/pkg-config"
fi

# The benchmark checkpoints (numpy, CPU) are written while the build runs.
mkdir -p "$models"
checkpoint() {  # family size dtype name [positions]
  [ -f "$models/$4/config.json" ] ||
    "$py" "$root/bench/make_checkpoint.py" "$1" "$models/$4" --size "$2" --dtype "$3" ${5:+--positions $5} >/dev/null
}
(checkpoint gpt2 base F32 gpt2-f32 & checkpoint gpt2 base BF16 gpt2-bf16 &
  checkpoint llama 500mb F32 llama-f32 16384 & checkpoint llama 500mb BF16 llama-bf16 16384 & wait) &
checkpoints=$!

step "configure and build (CUDA architectures $arch)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# --no-as-needed keeps libtorch_cuda linked although no symbol of it is named directly;
# without it LibTorch reports no CUDA on toolchains that link --as-needed by default.
{
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 \
    -DCMAKE_PREFIX_PATH="$prefix" -DATTNSCOPE_BUILD_UI=OFF -DATTNSCOPE_BUILD_BENCHMARKS=OFF -DATTNSCOPE_UNITY_BUILD=ON \
    -DATTNSCOPE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_EXE_LINKER_FLAGS="-Wl,--no-as-needed" &&
    cmake --build "$build" --parallel "$(nproc)" --target attnscope_core_tests attnscope_internal_tests attnscope-cli -- -k 0
} >"$out/build.txt" 2>&1
rc=$?
grep -E "error|Error|warning: .*deprecated" "$out/build.txt" | head -n 40
tail -n 3 "$out/build.txt"
[ $rc -eq 0 ] || { fail "configure or build (build.txt)"; exit 1; }
cli=$build/app/attnscope-cli

step "CUDA tests (max |GPU map - CPU map| per family and dtype)"
"$build/tests/attnscope_core_tests" "[cuda]" 2>&1 | tee "$out/cuda-tests.txt" | grep -E "cuda-check|FAILED|passed|failed"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "CUDA tests"
grep -q "cuda-check" "$out/cuda-tests.txt" || fail "the CUDA tests did not run on a GPU (LibTorch sees no CUDA device?)"

step "CUDA kernels (fused softmax, additive scores, causal linear attention) against the CPU path"
{
  "$build/tests/attnscope_internal_tests" "[cuda]" || fail "CUDA kernel tests"
  "$build/tests/attnscope_internal_tests" "[cuda-limits]" || fail "CUDA kernel limits"
} >"$out/cuda-kernels.txt" 2>&1
tail -n 6 "$out/cuda-kernels.txt"

if within "transformers cross-check"; then
  step "Hugging Face transformers cross-check (tiny random models of every family, CPU and GPU)"
  "$py" "$root/tests/gpu/hf_check.py" --cli "$cli" --jobs 8 >"$out/hf-check.txt" 2>&1 || fail "transformers cross-check"
  grep -vE "^hf-check .* \(ok," "$out/hf-check.txt" | tail -n 40
  echo "$(grep -c "(ok," "$out/hf-check.txt") comparisons within tolerance"
fi

if [ "$benchmarks" != quick ] && within "kernel rates"; then
  step "kernel rates (achieved bandwidth against a device-to-device copy)"
  "$build/tests/attnscope_internal_tests" "[.cuda-rates]" >"$out/rates.txt" 2>&1 || fail "kernel rates"
  grep "cuda-rates" "$out/rates.txt"
fi

# Peak GPU memory of a command: nvidia-smi's memory.used sampled every 100 ms (the process's
# reserved memory, CUDA context included), printed after its output.
gpuPeak() {
  local samples=/tmp/gpu-mem.$$ pid
  : >"$samples"
  (while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1 >>"$samples"; sleep 0.1; done) &
  pid=$!
  "$@"
  local rc=$?
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  echo "peak GPU memory used (nvidia-smi, 100 ms samples): $(sort -n "$samples" | tail -n 1) MiB"
  return $rc
}
bench() {  # model seq...
  local m=$1
  shift
  for seq in "$@"; do
    within "bench $m $seq" || return 0
    gpuPeak "$cli" bench "$models/$m" --device cuda --seq "$seq" --repeat 10 --warmup 2 || fail "bench $m $seq"
  done
}
peer() {  # model dtype seqs
  within "transformers $1 $3" || return 0
  gpuPeak "$py" "$root/bench/hf_peer.py" "$models/$1" --dtype "$2" --seq "$3" --repeat 5 --warmup 2 || fail "peer $1"
}
step "benchmarks: forward + capture beside transformers (bench.txt)"
wait "$checkpoints" || fail "writing the benchmark checkpoints"
{
  [ "$benchmarks" = all ] || echo "SKIPPED the benchmark matrix (ATTNSCOPE_GPU_BENCH=$benchmarks)"
  [ "$benchmarks" = all ] && bench gpt2-f32 512 1024
  [ "$benchmarks" = all ] && peer gpt2-f32 F32 512,1024
  [ "$benchmarks" = all ] && bench llama-f32 4096
  [ "$benchmarks" = all ] && peer llama-f32 F32 4096
  [ "$benchmarks" = all ] && bench gpt2-bf16 512 1024
  [ "$benchmarks" = all ] && peer gpt2-bf16 BF16 512,1024
  [ "$benchmarks" = all ] && bench llama-bf16 512 1024 4096 16384
  [ "$benchmarks" = all ] && peer llama-bf16 BF16 512,1024,4096,16384
  [ "$benchmarks" = all ] && bench llama-f32 512 1024 16384
  [ "$benchmarks" = all ] && peer llama-f32 F32 512,1024,16384
  if [ "$benchmarks" = quick ]; then
    bench gpt2-f32 1024
    bench gpt2-bf16 1024
    bench llama-f32 4096
    bench llama-bf16 4096 16384
  fi
  if { [ "$benchmarks" = all ] || [ "$benchmarks" = overview ]; } && within "overview steps at 4,096 tokens"; then
    "$cli" bench "$models/llama-f32" --device cuda --seq 4096 --repeat 3 --warmup 1 --thumbnails 48 --detail 512 \
      --metrics --rollout-rows 1 || fail "bench overview steps 4096"
  fi
} >"$out/bench.txt" 2>&1  # not piped, so that fail() counts in this shell
grep -E "^forward\+capture|^open|^peer|^peak|thumbnails|detail|metrics|rollout|SKIPPED|FAILED" "$out/bench.txt"

step "summary"
{
  echo "date: $(date -u +%Y-%m-%d)"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1)"
  "$py" -c 'import torch, transformers; print("libtorch:", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)'
  grep "cuda-check" "$out/cuda-tests.txt"
  grep -E "hf-check .*FAILED|hf-check failures" "$out/hf-check.txt" 2>/dev/null
  grep "cuda-rates" "$out/rates.txt" 2>/dev/null
  grep -E "^forward\+capture|^open|^peer|^peak" "$out/bench.txt"
  echo "skipped: ${skipped[*]:-none}"
  echo "failures: $failures; ${SECONDS}s"
} | tee "$out/summary.txt"
exit $((failures > 0))
