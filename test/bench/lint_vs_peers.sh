#!/usr/bin/env bash
# gpuguard-lint against the linters users would pick instead, over the same
# generated tree, side by side in one run.
#
#   test/bench/lint_vs_peers.sh [-n FILES] [-r REPS] [-p "PEERS"] [BUILD_DIR]
#     BUILD_DIR  where gpuguard-lint was built (default build). Nothing is built.
#     -n FILES   generated manifests (default 3000, gen_manifests.py: one document each)
#     -r REPS    runs of each pair, gpuguard-lint and the peer alternated; medians (default 1)
#     -p PEERS   which peers (default "yamllint kubeconform checkov kube-linter kyverno gator")
#
# Peers are installed, pinned, into a cache outside the tree
# (GPUGUARD_PEERS_CACHE, default ~/.cache/gpuguard-bench-peers), once:
#   yamllint, checkov               PyPI, in a venv, pip install NAME==VERSION
#   kubeconform                     Go module proxy, go install MODULE@vVERSION (GOBIN in the cache),
#                                   with the Kubernetes JSON schemas of the PyPI package
#                                   kubernetes-validate==VERSION (kubeconform itself would download
#                                   them, which this machine cannot; the "local-strict" set,
#                                   unknown fields are errors, with its references made local)
#   kube-linter                     Go module proxy, where it is served (it is not, at the time of
#                                   writing: the line says so and the peer is skipped)
#   kyverno, gator                  the Kyverno CLI and Gatekeeper's gator, built by
#                                   test/bench/peers/build-peers.sh (Go module proxy), run with
#                                   gpuguard's seed rules as their users write them
#                                   (test/bench/peers/policies): kyverno apply, gator test
# A peer that cannot be installed is reported and left out; the others still run.
#
# Each tool runs as its users run it on a directory, with its defaults on all
# cores (gpuguard-lint -j default = every core; kubeconform -n 4; yamllint and
# checkov in one process). Rates are documents per second of wall time; the
# CPU seconds (user+sys, from wait4) are printed beside them. Output:
#   peer NAME VERSION: gpuguard-lint X docs/s, NAME Y docs/s, ratio R
#   lint peers: slowest ratio R over N peers
# where R = gpuguard-lint's rate / the peer's rate (above 1: gpuguard-lint is faster).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/test/bench"
N=3000 REPS=1 PEERS="yamllint kubeconform checkov kube-linter kyverno gator"
while getopts "n:r:p:h" o; do
  case $o in
    n) N=$OPTARG ;; r) REPS=$OPTARG ;; p) PEERS=$OPTARG ;;
    *) sed -n '2,28p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD_DIR=${1:-$ROOT/build}
LINT=$BUILD_DIR/gpuguard-lint
[ -x "$LINT" ] || { echo "lint_vs_peers.sh: no gpuguard-lint in $BUILD_DIR (build it first)" >&2; exit 2; }

# Pinned versions (the newest each registry served when this was written).
YAMLLINT_VERSION=1.38.0
CHECKOV_VERSION=3.3.30
KUBECONFORM_VERSION=0.8.0
KUBERNETES_VALIDATE_VERSION=1.37.0  # its JSON schemas, for kubeconform
KUBERNETES_SCHEMA_VERSION=1.37.0
KUBE_LINTER_MODULE=golang.stackrox.io/kube-linter/cmd/kube-linter
KUBE_LINTER_VERSION=0.7.6

CACHE=${GPUGUARD_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuguard-bench-peers}
mkdir -p "$CACHE/bin" "$CACHE/logs"
WORK=$(mktemp -d /tmp/gpuguard-bench-peers.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# --- installing (each once; a failure leaves a marker and is retried next run)
venv() {
  [ -x "$CACHE/venv/bin/pip" ] || python3 -m venv "$CACHE/venv" >"$CACHE/logs/venv.log" 2>&1
}
pip_install() {  # pip_install PACKAGE VERSION
  venv || return 1
  "$CACHE/venv/bin/pip" show "$1" 2>/dev/null | grep -qx "Version: $2" && return 0
  nice -n 10 "$CACHE/venv/bin/pip" install --disable-pip-version-check -q "$1==$2" >"$CACHE/logs/$1.log" 2>&1
}
go_install() {  # go_install NAME MODULE VERSION
  local go; go=$(command -v go || echo /usr/local/go/bin/go)
  [ -x "$go" ] || return 1
  [ -x "$CACHE/bin/$1" ] && [ "$(cat "$CACHE/bin/$1.version" 2>/dev/null)" = "$3" ] && return 0
  GOBIN="$CACHE/bin" GOPATH="$CACHE/gopath" GOMODCACHE="$CACHE/gopath/pkg/mod" GOFLAGS=-mod=mod \
    nice -n 10 "$go" install "$2@v$3" >"$CACHE/logs/$1.log" 2>&1 && echo "$3" >"$CACHE/bin/$1.version"
}
# kubernetes-validate's JSON schemas for one Kubernetes version, rewritten for
# kubeconform: its files name their shared definitions by a kubernetes.io URL
# ("$id", "$ref": "/api/_definitions.json#..."), which kubeconform would try
# to download; here they refer to the _definitions.json beside them.
kube_schemas() {
  local out=$CACHE/kubeconform-schemas/v$KUBERNETES_SCHEMA_VERSION
  if [ ! -s "$out/pod-v1.json" ]; then
    pip_install kubernetes-validate "$KUBERNETES_VALIDATE_VERSION" || return 1
    "$CACHE/venv/bin/python" - "$KUBERNETES_SCHEMA_VERSION" "$out" <<'PY' || return 1
import json, os, sys, kubernetes_validate
src = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema",
                   "v" + sys.argv[1] + "-local-strict")
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
for name in os.listdir(src):
    if not name.endswith(".json"):
        continue
    schema = json.load(open(os.path.join(src, name)))
    schema.pop("$id", None)
    text = json.dumps(schema).replace('"/api/_definitions.json#', '"_definitions.json#')
    open(os.path.join(out, name), "w").write(text)
PY
  fi
  echo "$out"
}

declare -A VERSION CMD
for p in $PEERS; do
  case $p in
    yamllint)
      if pip_install yamllint "$YAMLLINT_VERSION"; then
        VERSION[$p]=$YAMLLINT_VERSION CMD[$p]="$CACHE/venv/bin/yamllint -f parsable"
      fi ;;
    checkov)
      if pip_install checkov "$CHECKOV_VERSION"; then
        VERSION[$p]=$CHECKOV_VERSION
        CMD[$p]="$CACHE/venv/bin/checkov --framework kubernetes --compact --quiet --skip-download -o cli -d"
      fi ;;
    kubeconform)
      if go_install kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION" &&
         SCHEMAS=$(kube_schemas); then
        VERSION[$p]=$KUBECONFORM_VERSION
        CMD[$p]="$CACHE/bin/kubeconform -strict -summary -kubernetes-version $KUBERNETES_SCHEMA_VERSION -schema-location $SCHEMAS/{{.ResourceKind}}{{.KindSuffix}}.json"
      fi ;;
    kube-linter)
      if go_install kube-linter "$KUBE_LINTER_MODULE" "$KUBE_LINTER_VERSION"; then
        VERSION[$p]=$KUBE_LINTER_VERSION CMD[$p]="$CACHE/bin/kube-linter lint"
      fi ;;
    kyverno|gator)
      if [ -z "${ADMISSION_PEERS:-}" ]; then
        ADMISSION_PEERS=$("$HERE/peers/build-peers.sh" 2>"$CACHE/logs/build-peers.log") || ADMISSION_PEERS=none
      fi
      POLICIES=$HERE/peers/policies
      if [ "$p" = kyverno ] && [ -x "$ADMISSION_PEERS/kyverno-v1.19.1/bin/kyverno" ]; then
        VERSION[$p]=1.19.1
        # kyverno apply reads the files of one directory, not of its subdirectories: every file
        # of the tree is named with --resource, in one process, as a script of its users would
        cat >"$WORK/kyverno-tree" <<EOF
#!/usr/bin/env bash
mapfile -t files < <(find "\$1" -name '*.yaml' | sort)
exec "$ADMISSION_PEERS/kyverno-v1.19.1/bin/kyverno" apply "$POLICIES/kyverno-gpu-seed-rules.yaml" "\${files[@]/#/--resource=}"
EOF
        chmod +x "$WORK/kyverno-tree"
        CMD[$p]="$WORK/kyverno-tree"
      elif [ "$p" = gator ] && [ -x "$ADMISSION_PEERS/gatekeeper-v3.23.1/bin/gator" ]; then
        VERSION[$p]=3.23.1
        CMD[$p]="$ADMISSION_PEERS/gatekeeper-v3.23.1/bin/gator test -f $POLICIES/gatekeeper-gpu-seed-rules.yaml -f"
      fi ;;
    *) echo "lint_vs_peers.sh: unknown peer $p" >&2; exit 2 ;;
  esac
  if [ -z "${CMD[$p]:-}" ]; then
    echo "# $p: not installed, left out (the registry's answer is in $CACHE/logs/$p.log)"
  fi
done

# --- the tree, and a copy of the binary (a rebuild during the run cannot change it)
python3 "$HERE/gen_manifests.py" tree "$WORK/tree" "$N"
cp "$LINT" "$WORK/gpuguard-lint"
DOCS=$N  # one document per generated file

# timeit CMD... : runs CMD with output to $OUT, prints "wall cpu" (seconds).
timeit() {
  python3 - "$@" <<'PY'
import os, sys, time
cmd = sys.argv[1:]
out = open(os.environ["OUT"], "wb")
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.dup2(out.fileno(), 1); os.dup2(out.fileno(), 2)
    os.execv(cmd[0], cmd)
_, status, ru = os.wait4(pid, 0)
print(f"{time.monotonic() - t0:.3f} {ru.ru_utime + ru.ru_stime:.3f}")
PY
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# lint_vs_peers: $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $N files, $DOCS documents; median of $REPS"
echo "# gpuguard-lint $("$WORK/gpuguard-lint" --version 2>&1 | head -1) from $LINT"
slowest="" count=0
for p in $PEERS; do
  [ -n "${CMD[$p]:-}" ] || continue
  : >"$WORK/g.$p"; : >"$WORK/p.$p"
  for _ in $(seq 1 "$REPS"); do
    OUT="$WORK/g.out" timeit "$WORK/gpuguard-lint" --color never "$WORK/tree" >>"$WORK/g.$p"
    # shellcheck disable=SC2086  # CMD is a command line
    OUT="$WORK/p.out" timeit ${CMD[$p]} "$WORK/tree" >>"$WORK/p.$p"
  done
  gw=$(cut -d' ' -f1 "$WORK/g.$p" | median) gc=$(cut -d' ' -f2 "$WORK/g.$p" | median)
  pw=$(cut -d' ' -f1 "$WORK/p.$p" | median) pc=$(cut -d' ' -f2 "$WORK/p.$p" | median)
  echo "#   $p: $(wc -l <"$WORK/p.out") lines of output; last: $(tail -1 "$WORK/p.out" | cut -c1-120)"
  awk -v n="$p" -v v="${VERSION[$p]}" -v d="$DOCS" -v gw="$gw" -v gc="$gc" -v pw="$pw" -v pc="$pc" 'BEGIN {
    printf "#   wall/cpu seconds: gpuguard-lint %.2f/%.2f, %s %.2f/%.2f\n", gw, gc, n, pw, pc
    printf "peer %s %s: gpuguard-lint %.0f docs/s, %s %.0f docs/s, ratio %.2f\n", n, v, d / gw, n, d / pw, pw / gw }'
  r=$(awk -v gw="$gw" -v pw="$pw" 'BEGIN { printf "%.2f", pw / gw }')
  count=$((count + 1))
  if [ -z "$slowest" ] || awk -v a="$r" -v b="$slowest" 'BEGIN { exit !(a < b) }'; then slowest=$r; fi
done
echo "lint peers: slowest ratio ${slowest:-n/a} over $count peers"
