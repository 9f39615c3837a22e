#!/usr/bin/env bash
# Helm charts that a run cannot render are notes, never exit 2, and nothing linted is an
# error only when asked (--fail-on-empty):
#   * a chart whose Chart.yaml dependencies are not fetched (no charts/): one note naming
#     the chart, exit 0 (needs helm on PATH; skipped without it);
#   * --render none: charts are not rendered (one note naming the chart), exit 0;
#   * --fail-on-empty: a run that judged no Kubernetes object exits 2 and says so; a run
#     that judged one is unaffected.
#
#   test/lint/charts_test.sh [BUILD_DIR]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
LINT=$BUILD/gpuguard-lint
[[ -x $LINT ]] || { echo "FAIL: gpuguard-lint is not built in $BUILD"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0 passed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
# expect WHAT STATUS PATTERN ARGS... : gpuguard-lint ARGS exits STATUS and its stderr matches PATTERN once
expect() {
  local what=$1 want=$2 pattern=$3 rc=0; shift 3
  (cd "$TMP" && "$LINT" "$@") >"$TMP/out" 2>"$TMP/err" || rc=$?
  if [[ $rc == "$want" && $(grep -cE "$pattern" "$TMP/err") == 1 ]]; then ok "$what (exit $rc)"
  else fail "$what: exit $rc, stderr: $(cat "$TMP/err")"; fi
}

mkdir -p "$TMP/repo/chart/templates" "$TMP/repo/deploy"
cat >"$TMP/repo/chart/Chart.yaml" <<'YAML'
apiVersion: v2
name: app
version: 0.1.0
dependencies:
- name: redis
  version: 18.0.0
  repository: https://charts.example.invalid/stable
YAML
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  containers:\n  - name: a\n    image: x\n' \
  >"$TMP/repo/chart/templates/pod.yaml"

if command -v helm >/dev/null; then
  expect "a chart with unfetched dependencies is one note naming it, not exit 2" 0 \
    "note: Helm chart repo/chart not rendered: its dependencies are not fetched" repo/
else
  echo "# helm not on PATH: the unfetched-dependencies case is not run"
fi
expect "--render none leaves charts unrendered: one note naming the chart" 0 \
  "note: Helm chart templates not linted \(--render none\): repo/chart" --render none repo/
expect "--fail-on-empty: nothing linted is exit 2, said once" 2 "nothing linted \(--fail-on-empty\)" \
  --render none --fail-on-empty repo/
cp "$REPO/manifests/examples/good-pod.yaml" "$TMP/repo/deploy/"
expect "--fail-on-empty with an object linted: exit 0, the chart note still there" 0 "Helm chart templates not linted" \
  --render none --fail-on-empty repo/
mkdir -p "$TMP/empty"
expect "without --fail-on-empty an empty directory is a note and exit 0" 0 "no Kubernetes objects found in empty" empty
expect "with --fail-on-empty the same directory is exit 2" 2 "nothing linted \(--fail-on-empty\): no Kubernetes object in empty" \
  --fail-on-empty empty

echo "$passed passed, $failures failed"
[[ $failures == 0 ]]
