#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang++, -fsanitize=fuzzer,address,undefined)
# in build-fuzz and runs each for SECONDS; fails if any harness crashes,
# leaks, trips UBSan or breaks one of its invariants.
#   test/fuzz/run.sh 60        CI: one minute each
#   test/fuzz/run.sh 3600      a long local run
#   FUZZ_ONLY="fuzz_yaml" test/fuzz/run.sh 300     one harness
#   FUZZ_JOBS=2 test/fuzz/run.sh 3600     parallel libFuzzer workers per harness (default 1)
# New interesting inputs go to build-fuzz/corpus/<harness> (seeded from
# test/fuzz/corpus/<harness>, which is never written to); crashes are saved
# as build-fuzz/artifacts/<harness>/crash-* and each should become a
# regression test (test/unit/rules/fuzz_regressions_test.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SECONDS_EACH=${1:-60}
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
FUZZ_DIR=$ROOT/test/fuzz
HARNESSES=(fuzz_quantity fuzz_yaml fuzz_yaml_fast_path fuzz_engine fuzz_admission fuzz_json_reader fuzz_http1)
[ -n "${FUZZ_ONLY:-}" ] && read -r -a HARNESSES <<<"$FUZZ_ONLY"

command -v clang++ >/dev/null || { echo "run.sh: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

# Every library is instrumented for coverage and sanitizers; only the
# harnesses link the libFuzzer main.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -DGPUGUARD_BUILD_TESTS=OFF -DGPUGUARD_BUILD_FUZZ=ON >/dev/null
targets=()
for h in "${HARNESSES[@]}"; do
  if [ "$h" = fuzz_admission ] && [ ! -f webhook/admission.cpp ]; then
    echo "run.sh: webhook/admission.cpp missing, skipping fuzz_admission"; continue
  fi
  targets+=("$h")
done
cmake --build "$BUILD_DIR" -j"${FUZZ_BUILD_JOBS:-1}" --target "${targets[@]}"

# Longest input libFuzzer makes. The JSON harnesses bound their work by shape
# (jsonShapeCost: values in objects and arrays), not by bytes, so their inputs
# may be long (a big pod is long strings and many containers); the others keep 16 KB.
max_len() {
  case $1 in
    fuzz_admission | fuzz_engine) echo 262144 ;;
    *) echo 16384 ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
summary=()
for h in "${targets[@]}"; do
  corpus="$BUILD_DIR/corpus/$h"
  artifacts="$BUILD_DIR/artifacts/$h"
  mkdir -p "$corpus" "$artifacts"
  # fuzz_yaml_fast_path reads what fuzz_yaml reads: it shares its seeds and dictionary.
  inputs=$h
  [ "$h" = fuzz_yaml_fast_path ] && inputs=fuzz_yaml
  dict=()
  [ -f "$FUZZ_DIR/$inputs.dict" ] && dict=(-dict="$FUZZ_DIR/$inputs.dict")
  seeds=()
  [ -d "$FUZZ_DIR/corpus/$inputs" ] && seeds=("$FUZZ_DIR/corpus/$inputs")
  log="$BUILD_DIR/$h.log"
  echo "== $h: ${SECONDS_EACH}s (log: $log)"
  set +e
  parallel=()
  # -jobs writes fuzz-N.log into the working directory: run in the build dir.
  [ "${FUZZ_JOBS:-1}" -gt 1 ] && parallel=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS")
  (cd "$BUILD_DIR" && "$BUILD_DIR/test/fuzz/$h" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -max_len="${FUZZ_MAX_LEN:-$(max_len "$h")}" -print_final_stats=1 "${parallel[@]}" \
    -artifact_prefix="$artifacts/" "${dict[@]}" "$corpus" "${seeds[@]}") >"$log" 2>&1
  rc=$?
  set -e
  # `|| true`: a harness that dies on its seeds logs no "cov:" line, and under
  # pipefail the failed grep would end this script before it reports the crash.
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}' || true)
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}' || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}' || true)
  line="$h: rc=$rc runs=$runs exec/s=$speed cov=${cov:-?} corpus=$(ls "$corpus" | wc -l)"
  summary+=("$line")
  echo "   $line"
  if [ $rc -ne 0 ]; then
    failed+=("$h")
    grep -m1 -A12 -E 'invariant failed|ERROR: |runtime error' "$log" >&2 || tail -40 "$log" >&2
    ls "$artifacts" >&2
  fi
done
printf '%s\n' "${summary[@]}" >"$BUILD_DIR/summary.txt"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run.sh: FAILED: ${failed[*]} (inputs in $BUILD_DIR/artifacts/)" >&2
  exit 1
fi
echo "run.sh: all harnesses ran ${SECONDS_EACH}s without a crash"
