#!/usr/bin/env bash
# gpuguard-lint against a plain yaml-cpp parse of the same files, side by side
# in one run, plus start-up time.
#
#   test/bench/lint_vs_yamlcpp.sh [-n FILES] [-r REPS] [-y YAMLCPP_PARSE] [BUILD_DIR]
#     BUILD_DIR   where gpuguard-lint was built (default build): BUILD_DIR/gpuguard-lint
#                 or BUILD_DIR/gpuguard-lint. Nothing is built.
#     -y PATH     the raw parse tool (default build-bench/test/bench/yamlcpp-parse; it is
#                 built by -DGPUGUARD_BUILD_BENCH=ON, target yamlcpp-parse)
#     -n FILES    generated manifests (default 5000, gen_manifests.py: Deployments,
#                 Pods, Jobs, some GPU, comments, flow and block styles, ~65 lines each)
#     -r REPS     runs of each measurement, interleaved; the median is printed (default 3)
#
# For each tree (the generated one and ../shared/corpus/real) prints wall and
# CPU (user+sys) seconds and docs/s of: yamlcpp-parse (YAML::LoadAll per file,
# one thread), gpuguard-lint -j1, gpuguard-lint -j2; then the ratios
#   lint -j1 / raw parse   (target >= 0.8, by CPU time: one core each)
#   lint -j2 / lint -j1    (target >= 1.6, by wall time)
#   lint -j2 / raw parse   lint -j2's rate by wall time on 2 cores against the raw parse's
#                          rate on one core (by its CPU time: the single-core floor);
#                          target >= 1.6 (issue 18)
# and hyperfine -N medians of `gpuguard-lint --version` and a one-file lint
# (target <= 10 ms).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/test/bench"
N=5000 REPS=3 RAW="$ROOT/build-bench/test/bench/yamlcpp-parse"
while getopts "n:r:y:h" o; do
  case $o in
    n) N=$OPTARG ;; r) REPS=$OPTARG ;; y) RAW=$OPTARG ;;
    *) sed -n '2,21p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD_DIR=${1:-$ROOT/build}
LINT=$BUILD_DIR/gpuguard-lint
[ -x "$LINT" ] || { echo "lint_vs_yamlcpp.sh: no gpuguard-lint in $BUILD_DIR" >&2; exit 2; }
[ -x "$RAW" ] || { echo "lint_vs_yamlcpp.sh: no $RAW (cmake -DGPUGUARD_BUILD_BENCH=ON, target yamlcpp-parse; or -y)" >&2; exit 2; }
REAL=${REAL:-$(cd "$(dirname "$0")/../.." && pwd)/../shared/corpus/real}

WORK=$(mktemp -d /tmp/gpuguard-bench-lint.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
python3 "$HERE/gen_manifests.py" tree "$WORK/tree" "$N"
# Copy the lint binary next to the data: a later rebuild of BUILD_DIR by someone
# else cannot change it in the middle of the run.
cp "$LINT" "$WORK/gpuguard-lint"
LINTC="$WORK/gpuguard-lint"

# timeit LABEL CMD... : runs CMD (stdout/stderr to files), prints "wall cpu"
# in seconds, from wait4's rusage (user+sys of the child).
timeit() {
  python3 - "$@" <<'PY'
import os, sys, time
label, cmd = sys.argv[1], sys.argv[2:]
out = open(os.environ["OUT"], "wb")
stdin = open(os.environ["IN"], "rb") if os.environ.get("IN") else None
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    if stdin: os.dup2(stdin.fileno(), 0)
    os.dup2(out.fileno(), 1); os.dup2(out.fileno(), 2)
    os.execv(cmd[0], cmd)
_, status, ru = os.wait4(pid, 0)
print(f"{time.monotonic() - t0:.3f} {ru.ru_utime + ru.ru_stime:.3f}")
PY
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench_tree() {  # bench_tree NAME DIR
  local name=$1 dir=$2
  find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' \) | sort >"$WORK/$name.list"
  local files; files=$(wc -l <"$WORK/$name.list")
  IN="$WORK/$name.list" OUT="$WORK/raw.out" timeit raw "$RAW" - >/dev/null
  local docs; docs=$(sed -E 's/.*docs=([0-9]+).*/\1/' "$WORK/raw.out")
  local bytes; bytes=$(sed -E 's/.*bytes=([0-9]+).*/\1/' "$WORK/raw.out")
  : >"$WORK/$name.raw"; : >"$WORK/$name.j1"; : >"$WORK/$name.j2"
  for _ in $(seq 1 "$REPS"); do
    IN="$WORK/$name.list" OUT="$WORK/raw.out" timeit raw "$RAW" - >>"$WORK/$name.raw"
    OUT="$WORK/lint1.out" timeit lint "$LINTC" --color never -j 1 "$dir" >>"$WORK/$name.j1"
    OUT="$WORK/lint2.out" timeit lint "$LINTC" --color never -j 2 "$dir" >>"$WORK/$name.j2"
  done
  echo "## $name: $files files, $docs documents, $bytes bytes ($(wc -l <"$WORK/lint1.out") lines of lint output)"
  local k wall cpu
  for k in raw j1 j2; do
    wall=$(cut -d' ' -f1 "$WORK/$name.$k" | median); cpu=$(cut -d' ' -f2 "$WORK/$name.$k" | median)
    eval "W_$k=$wall C_$k=$cpu"
    awk -v k="$k" -v w="$wall" -v c="$cpu" -v d="$docs" -v b="$bytes" 'BEGIN {
      n = (k == "raw") ? "yamlcpp-parse (LoadAll)" : (k == "j1") ? "gpuguard-lint -j1" : "gpuguard-lint -j2";
      printf "  %-24s wall %7.2f s  cpu %7.2f s  %8.0f docs/s wall  %8.0f docs/s cpu  %5.1f MB/s cpu\n",
        n, w, c, d / w, d / c, b / c / 1e6 }'
  done
  awk -v wr="$W_raw" -v cr="$C_raw" -v w1="$W_j1" -v c1="$C_j1" -v w2="$W_j2" -v c2="$C_j2" 'BEGIN {
    printf "  ratio lint -j1 / raw parse: %.2fx by CPU time, %.2fx by wall time (target >= 0.8)\n", cr / c1, wr / w1;
    printf "  ratio lint -j2 / lint -j1:  %.2fx by wall time (target >= 1.6)\n", w1 / w2;
    printf "  ratio lint -j2 (2 cores, wall) / raw parse (1 core, CPU): %.2fx (target >= 1.6); ", cr / w2;
    printf "CPU-bound bound %.2fx (2 x raw CPU / lint -j2 CPU)\n", 2 * cr / c2 }'
}

echo "# lint_vs_yamlcpp: $(date -u +%FT%TZ) $(uname -n) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $LINT ($("$LINTC" --version 2>&1 | head -1)); raw parse $RAW; median of $REPS"
bench_tree generated "$WORK/tree"
[ -d "$REAL" ] && bench_tree corpus-real "$REAL"

command -v hyperfine >/dev/null || { echo "## start-up: hyperfine not installed (apt-get install hyperfine)"; exit 0; }
echo "## start-up (hyperfine -N, median)"
ONE=$(head -1 "$WORK/generated.list")
hyperfine -N -i --warmup 10 --runs 100 --export-json "$WORK/hf.json" \
  "$LINTC --version" "$LINTC --color never $ONE" >/dev/null 2>&1
python3 - "$WORK/hf.json" <<'PY'
import json, sys
for r, cmd in zip(json.load(open(sys.argv[1]))["results"], ["gpuguard-lint --version", "gpuguard-lint one file"]):
    print(f"  {cmd:28s} median {r['median']*1e3:6.2f} ms  mean {r['mean']*1e3:6.2f} ± {r['stddev']*1e3:5.2f} ms"
          f"  user {r['user']*1e3:5.2f} sys {r['system']*1e3:5.2f} ms  (target <= 10 ms)")
PY
