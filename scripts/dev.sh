#!/usr/bin/env bash
# AttnScope on a fresh Debian 12 machine: install the Debian packages it needs, build, and then
#   scripts/dev.sh gui [MODEL]   start the desktop app (on MODEL when given)
#   scripts/dev.sh test          run the whole test suite (what CI runs; docs/ci.md): the Release build's
#                                ctest, then the same core, cli and ui tests built with clang
#                                under ASan + UBSan in build-sanitize/, with short fixed-seed
#                                runs of the libFuzzer targets (docs/fuzzing.md)
#   scripts/dev.sh build         only install and build
# Run as root, or as a user with sudo. Nothing is downloaded except Debian packages.
set -euo pipefail

mode=${1:-build}
shift || true
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNSCOPE_BUILD_DIR:-$root/build}
sanitize_build=${ATTNSCOPE_SANITIZE_BUILD_DIR:-$root/build-sanitize}

packages=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libopenblas0-pthread          # LibTorch 1.13 (CPU); OpenBLAS for its matrix products
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libgl-dev
  nlohmann-json3-dev libpcre2-dev libutf8proc-dev libsentencepiece-dev
  catch2 libbenchmark-dev
  fonts-dejavu-core                           # text in offscreen GUI tests and exported figures
  clang libclang-rt-dev                       # the sanitizer build and libFuzzer (scripts/dev.sh test)
  desktop-file-utils appstream                # validate the installed .desktop and AppStream files (ctest install_tree)
)

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "== installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  local extra=()
  # CMAKE_PREFIX_PATH (e.g. a CUDA LibTorch) and other -D options pass through ATTNSCOPE_CMAKE_ARGS.
  read -r -a extra <<< "${ATTNSCOPE_CMAKE_ARGS:-}"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DATTNSCOPE_BUILD_UI=ON -DATTNSCOPE_BUILD_TESTS=ON -DATTNSCOPE_BUILD_BENCHMARKS=ON -DATTNSCOPE_UNITY_BUILD=ON "${extra[@]}"
  cmake --build "$build" --parallel "$(nproc)"
}

# The sanitizer stage: clang, -fsanitize=address,undefined and libFuzzer's coverage on the whole
# tree (LibTorch, Qt and the system libraries are not instrumented), the tests and the fuzz
# targets, then ctest there. ATTNSCOPE_SKIP_SANITIZE=1 leaves it out (local runs only).
# -gline-tables-only: the sanitizers' stack traces keep file:line, without full debug info (which
# made the objects of LibTorch-using files several times larger and their links slow).
sanitize_stage() {
  local extra=()
  read -r -a extra <<< "${ATTNSCOPE_CMAKE_ARGS:-}"
  CC=clang CXX=clang++ cmake -S "$root" -B "$sanitize_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DATTNSCOPE_SANITIZE=address,undefined -DATTNSCOPE_FUZZ=ON \
    -DATTNSCOPE_CUDA=OFF -DATTNSCOPE_BUILD_UI=ON -DATTNSCOPE_BUILD_TESTS=ON -DATTNSCOPE_BUILD_BENCHMARKS=OFF \
    -DATTNSCOPE_UNITY_BUILD=ON "${extra[@]}"
  # Only what ctest runs here: the core, CLI, internal and ui tests (with the monkey walk) and the
  # fuzz targets; not the GUI executable or the benchmarks.
  local s0
  s0=$(date +%s)
  cmake --build "$sanitize_build" --parallel "$(nproc)" --target attnscope-cli attnscope_core_tests \
    attnscope_cli_tests attnscope_internal_tests attnscope_ui_tests attnscope_fuzzers
  local s1
  s1=$(date +%s)
  # install_tree checks the packaging in the Release stage; it needs the GUI executable, which this
  # stage does not build. Suppressions (scripts/sanitize/*.supp) say why each is there; everything
  # else fails the run.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1" \
  LSAN_OPTIONS="suppressions=$root/scripts/sanitize/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$root/scripts/sanitize/ubsan.supp" \
    ctest --test-dir "$sanitize_build" --output-on-failure --no-tests=error --parallel "$(nproc)" -E '^(layering.*|cuda.*|install_tree)$' "$@"
  echo "== sanitizer: build $((s1 - s0)) s, tests $(($(date +%s) - s1)) s"
}

# The test executables load LibTorch in their own process and keep the OpenBLAS kernels it picks;
# the app and the CLI re-execute themselves on faster ones when OpenBLAS 0.3.21 does not know the
# CPU and falls back to Prescott's SSE3 kernels (runtime/blas_threads.cpp). Give the tests the
# same kernels the app would use, so that they run at the machine's speed.
choose_blas_kernels() {
  [ -n "${OPENBLAS_CORETYPE:-}" ] && return 0
  local said
  # Captured first: grep -q stopping early would make the pipeline fail under pipefail.
  said=$(ATTNSCOPE_KEEP_BLAS=1 OPENBLAS_VERBOSE=2 "$build/app/attnscope-cli" list-builtin 2>&1 || true)
  if grep -q "Core: Prescott" <<< "$said"; then
    if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX
    elif grep -qw avx2 /proc/cpuinfo; then export OPENBLAS_CORETYPE=Haswell
    else return 0; fi
    echo "== OpenBLAS falls back to Prescott on this CPU; the tests run with OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
  fi
}

case "$mode" in
  gui)
    install_packages
    configure_and_build
    exec "$build/app/attnscope" "$@"
    ;;
  test)
    install_packages
    t0=$(date +%s)
    configure_and_build
    t1=$(date +%s)
    choose_blas_kernels
    (cd "$build" && ctest --output-on-failure --no-tests=error --parallel "$(nproc)" "$@")
    t2=$(date +%s)
    echo "== release: build $((t1 - t0)) s, tests $((t2 - t1)) s"
    if [ "${ATTNSCOPE_SKIP_SANITIZE:-0}" != 1 ]; then
      sanitize_stage "$@"
      t3=$(date +%s)
      echo "== release: build $((t1 - t0)) s, tests $((t2 - t1)) s; ASan+UBSan build and tests (with fuzz runs) $((t3 - t2)) s"
      echo "== total $((t3 - t0)) s"
    fi
    ;;
  build)
    install_packages
    configure_and_build
    ;;
  *)
    echo "usage: scripts/dev.sh gui [MODEL] | test | build" >&2
    exit 1
    ;;
esac
