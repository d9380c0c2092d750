#!/usr/bin/env bash
# AttnScope on a fresh Debian 12 machine: install the Debian packages it needs, build, and then
#   scripts/dev.sh gui [MODEL]   start the desktop app (on MODEL when given)
#   scripts/dev.sh test          run the whole test suite (what CI runs)
#   scripts/dev.sh build         only install and build
# Run as root, or as a user with sudo. Nothing is downloaded except Debian packages.
set -euo pipefail

mode=${1:-build}
shift || true
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNSCOPE_BUILD_DIR:-$root/build}

packages=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libopenblas0-pthread          # LibTorch 1.13 (CPU); OpenBLAS for its matrix products
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libgl-dev
  nlohmann-json3-dev libpcre2-dev libutf8proc-dev
  catch2 libbenchmark-dev
  fonts-dejavu-core                           # text in offscreen GUI tests and exported figures
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
    -DATTNSCOPE_BUILD_UI=ON -DATTNSCOPE_BUILD_TESTS=ON -DATTNSCOPE_BUILD_BENCHMARKS=ON "${extra[@]}"
  cmake --build "$build" --parallel "$(nproc)"
}

case "$mode" in
  gui)
    install_packages
    configure_and_build
    exec "$build/app/attnscope" "$@"
    ;;
  test)
    install_packages
    configure_and_build
    cd "$build"
    exec ctest --output-on-failure --no-tests=error "$@"
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
