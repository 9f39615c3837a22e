#!/usr/bin/env bash
# gpuguard-lint on a small GitOps tree, end to end, as a platform team runs it in CI:
# a kustomize base, an overlay whose strategic-merge patch raises the GPU count, a Helm
# chart, a `kubectl get -A -o yaml` List, suppression annotations with a typo and with
# no reason, and an empty directory. Checked twice:
#   * without kubectl, kustomize or helm on PATH (PATH is an empty directory): patches
#     are judged as fragments, chart templates are skipped with a note, never exit 2;
#   * with kubectl 1.35 (kustomize) and helm 4 (test/tools/install-kubectl-helm.sh):
#     the overlay's and the chart's rendered output, findings placed in the patch, the
#     base and the template they come from.
# Then several formats in one run, --fail-on, --enable/--disable, --list-rules --format
# json, and the SARIF checked by Microsoft's SARIF multitool (the validator whose rules
# GitHub code scanning applies; test/tools/install-sarif-multitool.sh).
#
#   test/lint/gitops_test.sh [BUILD_DIR]     exit 77: the tools could not be installed
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${1:-$REPO/build}" && pwd)
LINT=$BUILD/gpuguard-lint
[[ -x $LINT ]] || { echo "FAIL: $LINT is not built"; exit 1; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

cd "$TMP" || exit 1
mkdir -p gitops/base gitops/overlays/prod gitops/charts/llm/templates gitops/apps empty nobin
cat > gitops/base/kustomization.yaml <<'YAML'
resources: [deploy.yaml]
YAML
cat > gitops/base/deploy.yaml <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
spec:
  selector: {matchLabels: {app: train}}
  template:
    metadata:
      labels: {app: train}
    spec:
      nodeSelector:
        nvidia.com/cuda.driver-version.major: "550"
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
YAML
cat > gitops/overlays/prod/kustomization.yaml <<'YAML'
namespace: team-a
resources: [../../base]
patches:
- path: gpu-patch.yaml
YAML
# Only what the overlay changes: no image, no toleration, no driver pin.
cat > gitops/overlays/prod/gpu-patch.yaml <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
spec:
  template:
    spec:
      containers:
      - name: trainer
        resources:
          limits:
            nvidia.com/gpu: "0.5"
YAML
cat > gitops/charts/llm/Chart.yaml <<'YAML'
apiVersion: v2
name: llm
version: 0.1.0
YAML
cat > gitops/charts/llm/values.yaml <<'YAML'
gpus: 2
YAML
cat > gitops/charts/llm/templates/deployment.yaml <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-llm
spec:
  selector: {matchLabels: {app: llm}}
  template:
    metadata:
      labels: {app: llm}
    spec:
      nodeSelector:
        nvidia.com/cuda.driver-version.major: "550"
      containers:
      - name: server
        image: vllm/vllm-openai:v0.6.0
        resources:
          limits:
            nvidia.com/gpu: {{ .Values.gpus }}
YAML
cat > "$TMP/half-gpu-values.yaml" <<'YAML'
gpus: "0.5"
YAML
cat > gitops/apps/cluster.yaml <<'YAML'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: whole, namespace: team-b}
  spec:
    nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers: [{name: c, image: cuda:12, resources: {limits: {nvidia.com/gpu: 1}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: half, namespace: team-a}
  spec:
    nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers: [{name: c, image: cuda:12, resources: {limits: {nvidia.com/gpu: "0.5"}}}]
YAML
cat > gitops/apps/typo.yaml <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: typo
  annotations:
    ignore.gpuguard.io/gpu-fractionl: "HAMi shares this GPU"
    ignore.gpuguard.io/gpu-missing-driver-pin: ""
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - {name: c, image: cuda:12, resources: {limits: {nvidia.com/gpu: 1}}}
YAML

jqtest() { jq -e "$@" >/dev/null; }
finding() {  # finding FILE.json JQ-FILTER: how many findings match
  jq "[.findings[] | select($2)] | length" "$1"
}

# --- without kubectl, kustomize or helm ---------------------------------------------
echo "== without kubectl, kustomize or helm on PATH"
PATH="$TMP/nobin" "$LINT" --format json gitops empty > bare.json 2> bare.err
status=$?
check "exit 1 (error findings), not 2 (a chart is not an unreadable input)" test "$status" -eq 1
check "one note: the chart's templates are not linted without helm" \
  test "$(grep -c 'Helm chart templates not linted (helm is not on PATH): gitops/charts/llm' bare.err)" -eq 1
check "one note: the patch is judged as a fragment, named, the kustomization not rendered" \
  test "$(grep -c 'judged as kustomize patches (a kustomization lists the file): gitops/overlays/prod/gpu-patch.yaml;.*kustomizations not rendered (no kustomize or kubectl on PATH): gitops/overlays/prod' bare.err)" -eq 1
check "the empty directory is said on stderr" grep -q 'no Kubernetes objects found in empty' bare.err
check "the patch's fractional GPU is found" \
  test "$(finding bare.json '.file == "gitops/overlays/prod/gpu-patch.yaml" and .rule == "gpu-fractional" and .line == 12')" -eq 1
check "the patch is not judged for what it lacks (toleration, driver pin, limits, image)" \
  test "$(finding bare.json '.file == "gitops/overlays/prod/gpu-patch.yaml" and .rule != "gpu-fractional"')" -eq 0
check "nothing from the chart's templates" test "$(finding bare.json '.file | contains("charts/llm")')" -eq 0
check "the List item is named: Pod team-a/half, not items[1]" \
  test "$(finding bare.json '.rule == "gpu-fractional" and .object == {"apiVersion": "v1", "kind": "Pod", "namespace": "team-a", "name": "half"} and .podTemplate == "spec"')" -eq 1
check "a suppression naming no rule is a warning of its own" \
  test "$(finding bare.json '.rule == "ineffective-suppression" and .severity == "warning" and (.message | contains("did you mean ignore.gpuguard.io/gpu-fractional?"))')" -eq 1
check "a suppression with an empty reason is a warning of its own" \
  test "$(finding bare.json '.rule == "ineffective-suppression" and .field == "metadata.annotations[ignore.gpuguard.io/gpu-missing-driver-pin]" and .line == 7')" -eq 1
PATH="$TMP/nobin" "$LINT" gitops/apps/cluster.yaml > list.txt 2>&1
check "text names the object on the finding's line" grep -q '^gitops/apps/cluster.yaml:17:[0-9]*: error: Pod/team-a/half: items\[1\].spec.containers\[0\].resources.limits\[nvidia.com/gpu\]' list.txt
PATH="$TMP/nobin" "$LINT" --render kubectl gitops > /dev/null 2> render.err
check "--render kubectl without kubectl is bad usage (exit 2)" test $? -eq 2
check "... and says so" grep -q 'kubectl is not on PATH' render.err

# --- CI ergonomics (no renderer needed) --------------------------------------------
echo "== formats, --fail-on, --enable/--disable, --list-rules"
PATH="$TMP/nobin" "$LINT" --format sarif=out.sarif --format junit=out.xml --format github=gh.txt --format text gitops > multi.txt 2>/dev/null
check "several formats in one run: text on stdout" grep -q 'Pod/team-a/half' multi.txt
check "... SARIF in its file" jqtest '.runs[0].results | length > 0' out.sarif
check "... JUnit in its file, a testcase named by its object" grep -q '<testcase name="Pod/team-a/half" classname="gitops/apps/cluster"' out.xml
check "... GitHub annotations titled by rule and object" grep -q '^::error file=gitops/apps/cluster.yaml,line=17,col=[0-9]*,title=gpu-fractional Pod/team-a/half::' gh.txt
check "SARIF: each result names its object (logicalLocations)" \
  jqtest '[.runs[0].results[] | select(.locations[0].logicalLocations[0].fullyQualifiedName == "Pod/team-a/half")] | length == 1' out.sarif
check "SARIF: partialFingerprints on every result" jqtest '[.runs[0].results[] | select(.partialFingerprints | length == 0)] | length == 0' out.sarif
check "SARIF: every descriptor (rules, built-in checks, input-error) has fullDescription, help, helpUri" \
  jqtest '[(.runs[0].tool.driver.rules + .runs[0].tool.driver.notifications)[] | select(.fullDescription.text == null or .help.text == null or .helpUri == null)] | length == 0' out.sarif
missing=""
for anchor in $(jq -r '(.runs[0].tool.driver.rules + .runs[0].tool.driver.notifications)[].helpUri | sub(".*#"; "")' out.sarif); do
  grep -qx "## $anchor" "$REPO/docs/rules.md" || missing+=" $anchor"
done
check "SARIF: every helpUri is a section of docs/rules.md${missing:+ (missing:$missing)}" test -z "$missing"
check "two --format without a file: bad usage" test "$("$LINT" --format text --format json gitops >/dev/null 2>&1; echo $?)" -eq 2
check "--fail-on none: findings do not fail the run" test "$(PATH="$TMP/nobin" "$LINT" --fail-on none gitops >/dev/null 2>&1; echo $?)" -eq 0
check "--fail-on warning: a warning fails the run" test "$(PATH="$TMP/nobin" "$LINT" --fail-on warning gitops/apps/typo.yaml >/dev/null 2>&1; echo $?)" -eq 1
check "--fail-on error (default): a warning does not" test "$(PATH="$TMP/nobin" "$LINT" gitops/apps/typo.yaml >/dev/null 2>&1; echo $?)" -eq 0
PATH="$TMP/nobin" "$LINT" --format json --disable gpu-fractional gitops > disabled.json 2>/dev/null
check "--disable RULE" test "$(finding disabled.json '.rule == "gpu-fractional"')" -eq 0
printf 'rules: {gpu-fractional: off}\n' > off.yaml
PATH="$TMP/nobin" "$LINT" --format json --config off.yaml --enable gpu-fractional gitops > enabled.json 2>/dev/null
check "--enable RULE overrides the policy file" test "$(finding enabled.json '.rule == "gpu-fractional"')" -ge 2
check "--enable of an unknown rule is bad usage" test "$("$LINT" --enable gpu-fractionl gitops >/dev/null 2>&1; echo $?)" -eq 2
"$LINT" --list-rules --format json > rules.json
check "--list-rules --format json: rules and built-in checks" \
  jqtest '(map(.id) | index("gpu-fractional") != null and index("ineffective-suppression") != null and index("input-error") != null)' rules.json

# --- SARIF validator -----------------------------------------------------------------
if MULTITOOL=$("$REPO/test/tools/install-sarif-multitool.sh" 2>multitool.err); then
  DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "$MULTITOOL" validate out.sarif --rule-kind "Sarif;Ghas" --output validation.sarif \
    --log ForceOverwrite > validate.txt 2>&1
  check "SARIF multitool validate (SARIF and GitHub rules): no errors" test "$(grep -c ': error ' validate.txt)" -eq 0
  check "SARIF multitool validate: no warnings" test "$(grep -c ': warning ' validate.txt)" -eq 0
  grep -E ': (error|warning) ' validate.txt | head -20
else
  echo "SKIPPED LOUDLY: the SARIF multitool could not be installed: $(cat multitool.err)"
  skipped=1
fi

# --- with kubectl (kustomize) and helm -----------------------------------------------
echo "== with kubectl and helm on PATH"
if TOOLS=$("$REPO/test/tools/install-kubectl-helm.sh" 2>tools.err); then
  TOOLS_DIR=${TOOLS#export PATH=}
  TOOLS_DIR=${TOOLS_DIR%%:*}
  ln -s "$TOOLS_DIR/kubectl" "$TOOLS_DIR/helm" nobin/
  PATH="$TMP/nobin" "$LINT" --format json gitops > rendered.json 2> rendered.err
  status=$?
  check "exit 1 (error findings)" test "$status" -eq 1
  check "no note about skipped charts or fragments" test ! -s rendered.err
  check "the overlay's fractional GPU is placed in the patch that sets it" \
    test "$(finding rendered.json '.rule == "gpu-fractional" and .file == "gitops/overlays/prod/gpu-patch.yaml" and .line == 12 and .renderedFrom == "gitops/overlays/prod" and .object.namespace == "team-a" and .object.name == "train"')" -eq 1
  check "the rendered overlay has its toleration and pin from the base: no finding of those" \
    test "$(finding rendered.json '.renderedFrom == "gitops/overlays/prod" and .rule != "gpu-fractional"')" -eq 0
  check "the base is judged through the overlay only (not on its own, not as a second unit)" \
    test "$(finding rendered.json '.file | startswith("gitops/base")')" -eq 0
  check "the chart's missing toleration is placed in its template" \
    test "$(finding rendered.json '.rule == "gpu-missing-toleration" and .file == "gitops/charts/llm/templates/deployment.yaml" and .renderedFrom == "gitops/charts/llm" and .object.name == "release-name-llm"')" -eq 1
  PATH="$TMP/nobin" "$LINT" --format json --helm-values "$TMP/half-gpu-values.yaml" gitops/charts/llm > values.json 2>/dev/null
  check "--helm-values: the value's finding is at its template line" \
    test "$(finding values.json '.rule == "gpu-fractional" and .file == "gitops/charts/llm/templates/deployment.yaml" and .line == 18')" -eq 1
  PATH="$TMP/nobin" "$LINT" --render none --format json gitops > norender.json 2> norender.err
  check "--render none: the patch is a fragment again" grep -q 'kustomizations not rendered (--render none)' norender.err
  mkdir -p gitops/broken && printf 'resources: [missing.yaml]\n' > gitops/broken/kustomization.yaml
  PATH="$TMP/nobin" "$LINT" gitops/broken > broken.txt 2>&1
  check "a kustomization that does not render is an input error (exit 2) with kustomize's reason" \
    test $? -eq 2 -a "$(grep -c 'gitops/broken/kustomization.yaml: error: cannot render the kustomization' broken.txt)" -eq 1
  # A kustomize Component renders only inside a kustomization that lists it
  # (`kubectl kustomize` of the component alone fails): given alone, as a pre-commit
  # hook passes changed files, its patch is judged as a fragment, not an input error.
  mkdir -p gitops/components/gpu
  cat > gitops/components/gpu/kustomization.yaml <<'YAML'
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
patches:
- path: half-gpu.yaml
YAML
  cat > gitops/components/gpu/half-gpu.yaml <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
spec:
  template:
    spec:
      containers:
      - name: trainer
        resources:
          limits:
            nvidia.com/gpu: 0.5
YAML
  for input in gitops/components/gpu gitops/components/gpu/half-gpu.yaml; do
    PATH="$TMP/nobin" "$LINT" --format json "$input" > component.json 2> component.err
    status=$?
    check "a Component alone ($input): exit 1, not an input error" test "$status" -eq 1
    check "a Component alone ($input): its patch's fractional GPU, judged as a fragment" \
      test "$(finding component.json '.rule == "gpu-fractional" and .file == "gitops/components/gpu/half-gpu.yaml"')" -eq 1
    check "a Component alone ($input): no toleration or pin findings on the fragment" \
      test "$(finding component.json '.rule != "gpu-fractional"')" -eq 0
  done
else
  echo "SKIPPED LOUDLY: kubectl and helm could not be installed: $(cat tools.err)"
  skipped=1
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
if [[ ${skipped:-0} -eq 1 ]]; then
  echo "SKIP: some checks could not run (see above)"
  exit 77
fi
echo "all gitops checks passed"
