#!/usr/bin/env bash
# Installs the Debian packages gpuguard needs (when missing) and builds it in build/.
#   ./build.sh                 the two tools only: build/gpuguard-lint, build/gpuguard-webhook
#   ./build.sh --tests         also the test suite (what ./test.sh runs; GPUGUARD_BUILD_TESTS=ON too)
#   GPUGUARD_SANITIZE=ON BUILD_DIR=build-asan ./build.sh --tests   ASan+UBSan build
# No compiler at all: the wheel, the static binaries and the image (README, docs/install.md).
set -euo pipefail
cd "$(dirname "$0")"

tests=${GPUGUARD_BUILD_TESTS:-OFF}
for arg in "$@"; do
  case $arg in
    --tests) tests=ON ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $arg (--tests, --help)" >&2; exit 2 ;;
  esac
done

# What the binaries link (OpenSSL, nlohmann_json, yaml-cpp, RE2); with the tests, what they use
# (GoogleTest, cpp-httplib, openssl); Google Benchmark only for a benchmark build
# (CMAKE_ARGS=-DGPUGUARD_BUILD_BENCH=ON).
packages=(cmake g++ make pkg-config libssl-dev nlohmann-json3-dev libyaml-cpp-dev libre2-dev)
[[ $tests == ON ]] && packages+=(libgtest-dev libgmock-dev libcpp-httplib-dev openssl)
[[ ${CMAKE_ARGS:-} == *GPUGUARD_BUILD_BENCH=ON* ]] && packages+=(libbenchmark-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
# ccache, when installed, makes rebuilds in several work trees cheap; it changes no output.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Without --tests, a build directory that already has the tests keeps them configured (so
# ctest still finds them) but only the two tools are rebuilt; a fresh one leaves them out.
test_option=()
if [[ $tests == ON ]]; then test_option=(-DGPUGUARD_BUILD_TESTS=ON)
elif [[ ! -f $BUILD_DIR/CMakeCache.txt ]]; then test_option=(-DGPUGUARD_BUILD_TESTS=OFF); fi
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of words
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DGPUGUARD_SANITIZE="${GPUGUARD_SANITIZE:-OFF}" "${test_option[@]}" "${launcher[@]}" ${CMAKE_ARGS:-} >/dev/null
if [[ $tests == ON ]]; then
  cmake --build "$BUILD_DIR" -j"$(nproc)"
else
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target gpuguard-lint gpuguard-webhook
fi
