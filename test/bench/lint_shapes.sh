#!/usr/bin/env bash
# How gpuguard-lint's work grows with the size of one input, shape by shape:
# each shape is generated at N and at 10N objects and linted (or fixed), and
# the growth of CPU time (user + sys, from /usr/bin/time -v: elapsed time on
# a shared machine says more about the neighbours than about the linter) and
# the peak RSS are printed. Linear work grows ~10x; quadratic ~100x.
# Memory: the peak RSS at 10N (and per input byte), and the growth of the
# peak RSS per input byte, (RSS(10N) - RSS(N)) / (bytes(10N) - bytes(N)):
# what each further byte of input costs beside the program's fixed base,
# with its findings (the report keeps them: "grow/B") and with every rule
# off ("bare/B"). An input read document by document (a List item by item)
# costs its text and little more without findings (~1-2); one whose trees
# are all held at once, ~17-25.
#
#   test/bench/lint_shapes.sh [-n N] [-c] [-l LIMIT] [-m MEMLIMIT] [-g GROWLIMIT] [-f FORMAT] [-s SHAPES] [BUILD_DIR]
#     -n N       objects at the small size (default 1000; 10N at the large)
#     -c         check: exit 1 when a shape grows more than LIMIT times
#                (default 25) from N to 10N, when an input shape (list,
#                multidoc, jsonstream) grows its peak RSS by more than
#                MEMLIMIT bytes per input byte with every rule off (default
#                3: ~1 each, a List's 5-6 while the YAML fast path held a
#                section's events) or by more than GROWLIMIT with its
#                findings (default 8), or when a shape does not end as it
#                should (ctest lint.shapes runs -c with a small N). Not the
#                memory in a sanitizer build, whose allocator keeps what is
#                freed.
#     -f FORMAT  the report's format (default text)
#     -s SHAPES  the shapes to run, comma-separated (default: all)
#
# Shapes: list (one kind: List of N pods), multidoc (N YAML documents),
# jsonstream (N JSON objects one after another), jsonarray (a JSON array of
# N objects: an input error, exit 2), fix (--fix on one pod with N
# containers, each a fix: N edits in one file, the file rewritten), claims
# (one pod whose one container lists all of its 10N resourceClaims), groups
# (a RayCluster of 5N GPU worker groups, each lacking the toleration: a
# finding per pod template), dupkeys (one pod whose 10N labels are each
# written twice: a duplicate-key warning each), mergelist (one pod whose
# labels merge one anchor through a list of 20N aliases). The last four are
# scaled up so that their small size is above the timer's floor.
# CPU times below 50 ms count as 50 ms, so that timer resolution cannot
# fake a ratio.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
N=1000 CHECK=0 LIMIT=25 MEMLIMIT=3 GROWLIMIT=8 FORMAT=text SHAPES=list,multidoc,jsonstream,jsonarray,fix,claims,groups,dupkeys,mergelist
while getopts "n:cl:m:g:f:s:h" o; do
  case $o in
    n) N=$OPTARG ;; c) CHECK=1 ;; l) LIMIT=$OPTARG ;; m) MEMLIMIT=$OPTARG ;; g) GROWLIMIT=$OPTARG ;;
    f) FORMAT=$OPTARG ;; s) SHAPES=$OPTARG ;;
    *) sed -n '2,41p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
LINT=$BUILD/gpuguard-lint
[[ -x $LINT ]] || { echo "FAIL: $LINT is not built"; exit 1; }
[[ -x /usr/bin/time ]] || { echo "SKIP: /usr/bin/time not installed (apt-get install time)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

generate() {  # generate SHAPE COUNT > file
  python3 - "$1" "$2" <<'PY'
import json, sys
shape, n = sys.argv[1], int(sys.argv[2])
image = "nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04"
def pod_yaml(i, indent=""):
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", f"  name: train-{i}", "  namespace: ml", "spec:",
             "  containers:", "  - name: cuda", f"    image: {image}", "    resources:", "      requests:",
             "        nvidia.com/gpu: 1"]
    return "".join(indent + l + "\n" for l in lines)
def pod_json(i):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"train-{i}", "namespace": "ml"},
            "spec": {"containers": [{"name": "cuda", "image": image,
                                     "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]}}
out = sys.stdout
if shape == "list":
    out.write("apiVersion: v1\nkind: List\nitems:\n")
    for i in range(n):
        out.write("- " + pod_yaml(i, "  ")[2:])
elif shape == "multidoc":
    for i in range(n):
        out.write("---\n" + pod_yaml(i))
elif shape == "jsonstream":
    for i in range(n):
        out.write(json.dumps(pod_json(i), indent=1) + "\n")
elif shape == "jsonarray":
    out.write(json.dumps([pod_json(i) for i in range(n)]) + "\n")
elif shape == "claims":
    names = [f"c{i}" for i in range(n * 10)]
    out.write(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"resourceClaims": [{"name": c, "resourceClaimName": "gpu"} for c in names],
                 "containers": [{"name": "c", "image": image, "resources": {"claims": [{"name": c} for c in names]}}]}}))
elif shape == "groups":
    group = lambda i: {"groupName": f"g{i}", "template": {"spec": {"containers": [
        {"name": "w", "image": image, "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}
    out.write(json.dumps({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rc", "namespace": "ml"},
        "spec": {"workerGroupSpecs": [group(i) for i in range(n * 5)]}}))
elif shape == "dupkeys":
    out.write("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n  labels:\n")
    for value in ("a", "b"):
        out.write("".join(f"    key-{i}: {value}\n" for i in range(n * 10)))
    out.write(f"spec:\n  containers:\n  - name: c\n    image: {image}\n")
elif shape == "mergelist":
    out.write("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n  annotations: &m {a: b}\n")
    out.write("  labels:\n    <<: [" + ", ".join(["*m"] * (n * 20)) + "]\n")
    out.write(f"spec:\n  containers:\n  - name: c\n    image: {image}\n")
elif shape == "fix":
    out.write("apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  containers:\n")
    for i in range(n):
        out.write(f"  - name: c{i}\n    image: {image}\n    resources:\n      requests:\n        nvidia.com/gpu: 1\n")
PY
}

# measure SHAPE FILE -> "cpu_seconds peak_kb exit_status"
measure() {
  local shape=$1 file=$2 args=(--fail-on none -f "$FORMAT")
  [[ $shape == fix ]] && args=(--fix --fail-on none)
  /usr/bin/time -v -o "$WORK/time" timeout 600 "$LINT" "${args[@]}" "$file" >/dev/null 2>"$WORK/stderr"
  local status=$?
  awk -v s="$status" -F': ' '/User time/ {u=$2} /System time/ {y=$2} /Maximum resident/ {m=$2}
      END {printf "%.2f %d %d\n", u + y, m, s}' "$WORK/time"
}

# The peak RSS in KB of linting FILE with every rule off: what reading and
# judging the input holds, without the findings a report keeps.
RULES_OFF=()
while read -r id _; do
  case $id in duplicate-key | ignored-content | ineffective-suppression | input-error) ;; *) RULES_OFF+=(--disable "$id") ;; esac
done < <("$LINT" --list-rules)
peak_without_findings() {
  /usr/bin/time -f %M -o "$WORK/time" "$LINT" "${RULES_OFF[@]}" --fail-on none "$1" >/dev/null 2>&1
  tail -n 1 "$WORK/time"  # after "Command exited with non-zero status 2" for the JSON array
}
SANITIZED=0
grep -qs '^GPUGUARD_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" && SANITIZED=1

expected_status() { [[ $1 == jsonarray ]] && echo 2 || echo 0; }

echo "gpuguard-lint input shapes, N=$N and 10N, -f $FORMAT (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-11s %10s %10s %9s %9s %7s %11s %9s %9s %9s\n' shape "bytes(N)" "bytes(10N)" "cpu(N)" "cpu(10N)" ratio \
  "RSS(10N)" "RSS/bytes" "grow/B" "bare/B"
failures=0
IFS=, read -ra shapes <<<"$SHAPES"
for shape in "${shapes[@]}"; do
  small=$WORK/$shape-small.yaml large=$WORK/$shape-large.yaml
  generate "$shape" "$N" >"$small"
  generate "$shape" $((N * 10)) >"$large"
  # The smaller of two runs at each size: a neighbour's burst only adds time.
  read -r c1 k1 s1 < <(measure "$shape" "$small")
  [[ $shape == fix ]] && generate "$shape" "$N" >"$small"
  read -r c2 k2 _ < <(measure "$shape" "$small")
  read -r d1 m1 s2 < <(measure "$shape" "$large")
  [[ $shape == fix ]] && generate "$shape" $((N * 10)) >"$large"
  read -r d2 m2 _ < <(measure "$shape" "$large")
  n1=0 n2=0  # the input shapes only: the JSON array is refused, --fix holds its one document
  if [[ $shape == list || $shape == multidoc || $shape == jsonstream ]]; then
    n1=$(peak_without_findings "$small") n2=$(peak_without_findings "$large")
  fi
  read -r ratio cpuN cpu10 peak perByte withFindings growth < <(python3 - "$c1" "$c2" "$d1" "$d2" "$k1" "$k2" "$m1" \
    "$m2" "$n1" "$n2" "$(stat -c %s "$small")" "$(stat -c %s "$large")" <<'PY'
import sys
c1, c2, d1, d2, k1, k2, m1, m2, n1, n2, smallSize, size = sys.argv[1:]
small, large = min(float(c1), float(c2)), min(float(d1), float(d2))
peak, peakN = min(int(m1), int(m2)), min(int(k1), int(k2))
added = int(size) - int(smallSize)
withFindings = max(peak - peakN, 0) * 1024 / added
growth = max(int(n2) - int(n1), 0) * 1024 / added
print(f"{max(large, 0.05) / max(small, 0.05):.1f} {small:.2f} {large:.2f} {peak} {peak * 1024 / int(size):.1f}",
      f"{withFindings:.1f} {growth:.1f}")
PY
)
  printf '%-11s %10s %10s %8ss %8ss %6sx %8s KB %8sx %8sx %8sx\n' "$shape" "$(stat -c %s "$small")" \
    "$(stat -c %s "$large")" "$cpuN" "$cpu10" "$ratio" "$peak" "$perByte" "$withFindings" "$growth"
  want=$(expected_status "$shape")
  if [[ $s1 != "$want" || $s2 != "$want" ]]; then
    echo "  $shape: exit status $s1 / $s2, expected $want: $(head -c 300 "$WORK/stderr")"
    failures=$((failures + 1))
  fi
  if python3 -c "import sys; sys.exit(0 if float('$ratio') > float('$LIMIT') else 1)"; then
    echo "  $shape: 10N took ${ratio}x the CPU time of N (limit ${LIMIT}x): super-linear"
    failures=$((failures + 1))
  fi
  # The input shapes, read document by document and a List item by item:
  # each further input byte costs itself and little more, not its whole
  # tree; with findings, what the report keeps of them besides.
  if [[ $SANITIZED == 0 && ($shape == list || $shape == multidoc || $shape == jsonstream) ]]; then
    if python3 -c "import sys; sys.exit(0 if float('$growth') > float('$MEMLIMIT') else 1)"; then
      echo "  $shape: with every rule off, the peak RSS grew ${growth} bytes per input byte from N to 10N" \
        "(limit ${MEMLIMIT}): every document's tree is held at once"
      failures=$((failures + 1))
    fi
    if python3 -c "import sys; sys.exit(0 if float('$withFindings') > float('$GROWLIMIT') else 1)"; then
      echo "  $shape: with its findings, the peak RSS grew ${withFindings} bytes per input byte from N to 10N" \
        "(limit ${GROWLIMIT}): trees, or findings kept at more than the report needs"
      failures=$((failures + 1))
    fi
  fi
done
if [[ $CHECK == 1 && $failures -gt 0 ]]; then
  echo "FAIL: $failures shape(s)"
  exit 1
fi
exit 0
