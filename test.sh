#!/usr/bin/env bash
# Runs gpuguard's tests: the unit and integration suite (ctest) on the normal
# build and again under AddressSanitizer + UndefinedBehaviorSanitizer.
#   ./test.sh                    both suites
#   GPUGUARD_SKIP_ASAN=1 ./test.sh   only the normal build (faster)
#   GPUGUARD_FUZZ_SECONDS=60 ./test.sh   also run each libFuzzer harness that long
#   GPUGUARD_E2E=1 ./test.sh     also the end-to-end suite against a real kube-apiserver
set -euo pipefail
cd "$(dirname "$0")"

./build.sh --tests
ctest --test-dir build --output-on-failure -j"$(nproc)"

if [ "${GPUGUARD_SKIP_ASAN:-0}" != 1 ]; then
  GPUGUARD_SANITIZE=ON BUILD_DIR=build-asan BUILD_TYPE=Debug ./build.sh --tests
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$(nproc)"
fi

if [ -n "${GPUGUARD_FUZZ_SECONDS:-}" ] && [ -x test/fuzz/run.sh ]; then
  test/fuzz/run.sh "${GPUGUARD_FUZZ_SECONDS}"
fi

if [ "${GPUGUARD_E2E:-0}" = 1 ] && [ -x test/e2e/run.sh ]; then
  test/e2e/run.sh
fi
