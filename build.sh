#!/usr/bin/env bash
# Installs the Debian packages gpuguard needs (when missing) and builds it in build/.
#   ./build.sh                 release build with tests
#   GPUGUARD_SANITIZE=ON BUILD_DIR=build-asan ./build.sh   ASan+UBSan build
set -euo pipefail
cd "$(dirname "$0")"

# What the binaries link (OpenSSL, nlohmann_json, yaml-cpp, RE2) and what the tests use (GoogleTest,
# cpp-httplib, openssl); Google Benchmark only for a benchmark build (CMAKE_ARGS=-DGPUGUARD_BUILD_BENCH=ON).
packages=(cmake g++ make pkg-config libssl-dev nlohmann-json3-dev libyaml-cpp-dev libre2-dev
          libgtest-dev libgmock-dev libcpp-httplib-dev openssl)
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
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DGPUGUARD_SANITIZE="${GPUGUARD_SANITIZE:-OFF}" "${launcher[@]}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
