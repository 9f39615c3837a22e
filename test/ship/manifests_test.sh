#!/usr/bin/env bash
# The install manifests: every kustomization renders offline with kubectl, the
# rendered objects have the properties the install promises (check_manifests.py),
# gpuguard-lint finds no error in them, both policy files load, and the audit
# policy really turns every rule into a warning.
#
#   test/ship/manifests_test.sh [BUILD_DIR]      (BUILD_DIR default: build)
set -uo pipefail
# shellcheck disable=SC2034
TEST_NAME=manifests
# shellcheck source=test/ship/lib.sh
source "$(dirname "$0")/lib.sh"

BUILD=$(build_dir "${1:-}")
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import yaml' 2>/dev/null; then PY=$(command -v "$p"); break; fi
done

BASE_POLICY=$REPO/manifests/base/policy.yaml
AUDIT_POLICY=$REPO/manifests/components/audit/policy.yaml

# ---- rendering --------------------------------------------------------------------------

# name|directory|mode|checker flags
TARGETS=(
  "manifests|manifests|enforce|"
  "overlays/audit|manifests/overlays/audit|audit|"
  "overlays/enforce|manifests/overlays/enforce|enforce|"
  "cert-manager/audit|certs/cert-manager/audit|audit|--cert-manager"
  "cert-manager/enforce|certs/cert-manager/enforce|enforce|--cert-manager"
  "with system-cluster-critical|@enforce:system-cluster-critical|enforce|--priority-class"
  "with network-policy and monitoring|@enforce:network-policy,monitoring|enforce|--monitoring"
  "enforce with the audit component|@enforce:audit|audit|"
  "cert-manager with the audit component|@certs/cert-manager/enforce:audit|audit|--cert-manager"
  "audit with background-audit|@audit:background-audit|audit|--background-audit $BASE_POLICY"
  "enforce with background-audit|@enforce:background-audit|enforce|--background-audit $BASE_POLICY"
  "enforce with the audit and background-audit components|@enforce:audit,background-audit|audit|--background-audit $BASE_POLICY"
)
# own_overlay DIR BASE COMPONENTS : an overlay of one's own, the way docs/install.md says
# (kustomize wants relative paths): BASE (manifests/overlays/X or a path from the
# repository root) with the comma-separated manifests/components.
own_overlay() {
  local dir=$1 base=$2 components=$3 rel c
  mkdir -p "$dir"
  rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$REPO" "$dir")
  [[ $base == */* ]] || base=manifests/overlays/$base
  {
    echo "resources: [$rel/$base]"
    echo "components:"
    for c in ${components//,/ }; do echo "- $rel/manifests/components/$c"; done
  } >"$dir/kustomization.yaml"
}
RENDERED=()
if find_kubectl_or_cached; then
  for t in "${TARGETS[@]}"; do
    IFS='|' read -r name dir mode flags <<<"$t"
    path=$REPO/$dir
    if [[ $dir == @* ]]; then
      spec=${dir#@}
      path=$SHIP_TMP/own-${name// /-}
      own_overlay "$path" "${spec%%:*}" "${spec#*:}"
      dir="an overlay of ${spec%%:*} with components/{${spec#*:}}"
    fi
    out=$SHIP_TMP/rendered-${name//\//-}.yaml
    out=${out// /-}
    if "$KUBECTL" kustomize "$path" >"$out" 2>"$SHIP_TMP/kz.log"; then
      ok "kubectl kustomize $dir renders offline ($(grep -c '^kind:' "$out") objects)"
      RENDERED+=("$name|$out")
      if [[ -n $PY ]]; then
        # shellcheck disable=SC2086
        "$PY" "$SHIP_HERE/check_manifests.py" "$out" "$mode" $flags >"$SHIP_TMP/check.log" 2>&1
        report_lines "$name: " "$SHIP_TMP/check.log"
      fi
    else
      fail "kubectl kustomize $dir: $(cat "$SHIP_TMP/kz.log")"
    fi
  done
  [[ -n $PY ]] || skip "rendered-object checks: python3 with PyYAML (Debian: python3-yaml) not found"
  base=$SHIP_TMP/rendered-manifests.yaml
  enforce=$SHIP_TMP/rendered-overlays-enforce.yaml
  [[ -f $base && -f $enforce ]] && check "overlays/enforce renders exactly the base" cmp -s "$base" "$enforce"
  if [[ -f $base && -n $PY ]]; then
    "$PY" - "$base" "$BASE_POLICY" >"$SHIP_TMP/cm.log" 2>&1 <<'EOF'
import sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
cm = [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "gpuguard-policy"][0]
print("ok - the policy ConfigMap is manifests/base/policy.yaml verbatim" if cm["data"]["policy.yaml"] == open(sys.argv[2]).read()
      else "FAIL - the policy ConfigMap differs from manifests/base/policy.yaml")
EOF
    report_lines "" "$SHIP_TMP/cm.log"
  fi
else
  skip "rendering: $KUBECTL_MISSING"
fi

# ---- the components are what the Helm chart renders ----------------------------------------------

if [[ -n $PY ]] && find_helm; then
  "$HELM" template gpuguard "$REPO/manifests/chart/gpuguard" -n gpuguard-system --set serviceMonitor.enabled=true \
    --set networkPolicy.enabled=true >"$SHIP_TMP/chart.yaml" 2>"$SHIP_TMP/helm.log" || fail "helm template: $(cat "$SHIP_TMP/helm.log")"
  "$PY" - "$SHIP_TMP/chart.yaml" "$REPO/manifests/components" >"$SHIP_TMP/parity.log" 2>&1 <<'EOF'
import sys, yaml
chart = {o["kind"]: o for o in yaml.safe_load_all(open(sys.argv[1])) if o}
comp = sys.argv[2]
def spec(path):
    return yaml.safe_load(open(path))["spec"]
def without_instance(s):  # the chart's selectors also name the release
    text = yaml.safe_dump(s)
    return yaml.safe_load(text.replace("app.kubernetes.io/instance: gpuguard\n", "app.kubernetes.io/name: gpuguard\n"))
# The chart's group gpuguard-audit (its audit alerts) is not in the monitoring component.
chart["PrometheusRule"]["spec"]["groups"] = [g for g in chart["PrometheusRule"]["spec"]["groups"] if g["name"] != "gpuguard-audit"]
for kind, path in (("PrometheusRule", "monitoring/prometheusrule.yaml"), ("ServiceMonitor", "monitoring/servicemonitor.yaml"),
                   ("NetworkPolicy", "network-policy/networkpolicy.yaml")):
    same = without_instance(chart[kind]["spec"]) == spec(f"{comp}/{path}")
    print(("ok - " if same else "FAIL - ") + f"components/{path} has the spec of the chart's {kind}"
          + ("" if same else " (render the chart with serviceMonitor.enabled and networkPolicy.enabled and copy it)"))
# components/background-audit grants what the chart grants with the audit on (its default mode).
named = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(open(sys.argv[1])) if o}
mine = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(open(f"{comp}/background-audit/rbac.yaml")) if o}
for kind, name in (("ClusterRole", "gpuguard-audit"), ("Role", "gpuguard-audit-leader-election")):
    theirs = named.get((kind, name), {}).get("rules")
    same = theirs is not None and mine.get((kind, name), {}).get("rules") == theirs
    print(("ok - " if same else "FAIL - ") + f"components/background-audit/rbac.yaml: {kind} {name} has the chart's rules"
          + ("" if same else " (render the chart with mode: audit and copy them)"))
EOF
  report_lines "" "$SHIP_TMP/parity.log"
else
  skip "components vs the chart: no helm or no PyYAML"
fi
check "components/background-audit/enforce-policy.yaml is manifests/base/policy.yaml verbatim (the audit judges as enforce would)" \
  cmp -s "$BASE_POLICY" "$REPO/manifests/components/background-audit/enforce-policy.yaml"

# ---- the image tag is the project's version -------------------------------------------------------

version=$(sed -n 's/^project(gpuguard VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
# The one published name (tools/release.env), fully qualified, at the project's version.
repository=$(sed -n 's/^GPUGUARD_IMAGE_REPOSITORY=//p' "$REPO/tools/release.env")
image=$(sed -n 's/^ *image: *\([^ ]*gpuguard-webhook:[^ ]*\)$/\1/p' "$REPO/manifests/base/deployment.yaml")
check "the Deployment's image is $repository:<project version> (${image:-none} vs $version)" \
  test "$image" = "$repository:$version"
check "make-certs.sh names the same default image" grep -qF "image $image," "$REPO/certs/make-certs.sh"
check "make-certs.sh --image replaces that image (kustomize images: name)" grep -qF -- "- name: $repository\"" "$REPO/certs/make-certs.sh"

# ---- docs/install.md names only paths that exist ------------------------------------------------

if [[ -f $REPO/docs/install.md ]]; then
  missing_paths=()
  while IFS= read -r p; do
    p=${p%%[.,:;)]}
    [[ $p == certs/out || $p == certs/out/* ]] && continue   # written by make-certs.sh
    [[ -e $REPO/$p ]] || missing_paths+=("$p")
  done < <(grep -oE '(manifests|certs|test/ship)/[A-Za-z0-9_./-]*[A-Za-z0-9_-]' "$REPO/docs/install.md" | sort -u)
  check "every path docs/install.md names exists${missing_paths[*]:+ (missing: ${missing_paths[*]})}" test ${#missing_paths[@]} -eq 0
fi

# ---- the policy files -------------------------------------------------------------------------

if [[ -n $PY ]]; then
  "$PY" - "$BASE_POLICY" "$AUDIT_POLICY" >"$SHIP_TMP/policies.log" 2>&1 <<'EOF'
import sys, yaml
base = yaml.safe_load(open(sys.argv[1])) or {}
audit = yaml.safe_load(open(sys.argv[2])) or {}
b = {k: v for k, v in base.items() if k != "rules"}
a = {k: v for k, v in audit.items() if k != "rules"}
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
print("ok - the audit policy equals the base policy except for rules" if not diff
      else f"FAIL - the audit policy differs from the base policy outside rules: {diff}")
EOF
  report_lines "" "$SHIP_TMP/policies.log"
fi

LINT=$(find_binary "$BUILD" gpuguard-lint)
if [[ -z $LINT ]]; then
  if cmake_defines_target "$BUILD" gpuguard-lint; then
    fail "gpuguard-lint is a CMake target in $BUILD but is not built"
  else
    skip "lint checks: no gpuguard-lint in $BUILD"
  fi
  finish
fi

cd "$SHIP_TMP" || exit 1   # no .gpuguard.yaml from the checkout: every run names its policy
for pol in "$BASE_POLICY" "$AUDIT_POLICY"; do
  if "$LINT" --config "$pol" - </dev/null >"$SHIP_TMP/pol.log" 2>&1; then
    ok "gpuguard-lint loads ${pol#"$REPO"/}"
  else
    fail "gpuguard-lint rejects ${pol#"$REPO"/}: $(cat "$SHIP_TMP/pol.log")"
  fi
done
WEBHOOK=$(find_binary "$BUILD" gpuguard-webhook)
if [[ -n $WEBHOOK ]]; then
  for pol in "$BASE_POLICY" "$AUDIT_POLICY"; do
    if "$WEBHOOK" --check-policy --policy="$pol" >"$SHIP_TMP/pol.log" 2>&1; then
      ok "gpuguard-webhook --check-policy accepts ${pol#"$REPO"/}"
    else
      fail "gpuguard-webhook --check-policy rejects ${pol#"$REPO"/}: $(cat "$SHIP_TMP/pol.log")"
    fi
  done
else
  skip "gpuguard-webhook --check-policy: no gpuguard-webhook in $BUILD"
fi
printf 'rules:\n  no-such-rule: warning\n' >"$SHIP_TMP/bogus.yaml"
check "gpuguard-lint refuses a policy with an unknown rule (so the loads above mean something)" \
  not quiet "$LINT" --config "$SHIP_TMP/bogus.yaml" - </dev/null

# Audit means nothing denies: "*": warning, so a rule a later version adds is a warning too, and
# no rule is raised back to error.
"$LINT" --list-rules >"$SHIP_TMP/rules.txt" 2>&1
# Built-in checks (marked "(built-in)") cannot be configured, so no policy lists them.
RULES=$(awk 'NF && !/\(built-in\)/ { print $1 }' "$SHIP_TMP/rules.txt" | sort -u)
AUDIT_RULES=$(sed -n '/^rules:/,/^[^ #]/p' "$AUDIT_POLICY" | sed -n 's/^  \([^ :]*\): *\([a-z]*\).*$/\1=\2/p')
check "the audit policy makes every rule a warning (\"*\": warning), so a rule added later never denies" \
  grep -qx '"\*"=warning' <<<"$AUDIT_RULES"
raised=$(grep -v '=warning$\|=off$' <<<"$AUDIT_RULES" | tr '\n' ' ')
check "the audit policy raises no rule above warning${raised:+ ($raised)}" test -z "$raised"
check "gpuguard-lint --list-rules lists rules" test -n "$RULES"

# lint_clean LABEL ARGS... : gpuguard-lint with the base (enforcing) policy reports no error
lint_clean() {
  local label=$1; shift
  local rc=0
  "$LINT" --format json --config "$BASE_POLICY" "$@" >"$SHIP_TMP/lint.json" 2>"$SHIP_TMP/lint.err" || rc=$?
  if ((rc == 0)); then
    local n
    n=$(grep -c '"rule"' "$SHIP_TMP/lint.json")
    ok "gpuguard-lint finds no error in $label ($n warnings)"
  else
    fail "gpuguard-lint on $label exits $rc: $(head -c 2000 "$SHIP_TMP/lint.json") $(cat "$SHIP_TMP/lint.err")"
  fi
}
lint_clean "the manifest files" "$REPO/manifests/base" "$REPO/manifests/overlays" "$REPO/manifests/components" \
  "$REPO/certs/cert-manager"
for r in "${RENDERED[@]}"; do
  lint_clean "rendered $(cut -d'|' -f1 <<<"$r")" "$(cut -d'|' -f2 <<<"$r")"
done

# The audit policy admits the bad examples (warnings only); the base policy does not.
if [[ -d $REPO/manifests/examples ]]; then
  rc=0
  "$LINT" --format json --config "$AUDIT_POLICY" "$REPO/manifests/examples" >"$SHIP_TMP/audit.json" 2>&1 || rc=$?
  check "with the audit policy every example passes (warnings only; exit $rc)" test "$rc" -eq 0
  check "with the audit policy the bad examples still produce warnings" grep -q '"severity": "warning"' "$SHIP_TMP/audit.json"
  rc=0
  "$LINT" --config "$BASE_POLICY" "$REPO/manifests/examples" >/dev/null 2>&1 || rc=$?
  check "with the base policy the bad examples are errors (exit 1, got $rc)" test "$rc" -eq 1
fi

finish
