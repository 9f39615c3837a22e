# shellcheck shell=bash
# The rendered installs against a real kube-apiserver: a library for test/ship/apiserver_test.sh
# and for the e2e suite. Source test/ship/lib.sh first (ok/fail/skip, find_helm, find_kubectl).
#
#   ship_render_installs DIR
#       Renders every install variant into DIR: chart-<profile>.yaml (helm template of each
#       manifests/chart/gpuguard/ci profile, release gpuguard in gpuguard-system),
#       script-<mode>.yaml (certs/make-certs.sh + kubectl kustomize) and
#       kustomize-components.yaml (the network-policy and monitoring components).
#   ship_server_dry_run KUBECONFIG FILE...
#       kubectl apply --dry-run=server --validate=strict of each file: the API server decodes
#       every object strictly (unknown or duplicate fields fail) and runs its validation and
#       admission, storing nothing. Objects whose apiVersion the server does not serve (the
#       CRDs of prometheus-operator and cert-manager) are left out and named; before 1.21 a
#       PodDisruptionBudget goes as policy/v1beta1; a file using matchConditions is skipped
#       before Kubernetes 1.30.
#
# From the e2e suite, with its cluster up and $KUBECONFIG set:
#   source test/ship/lib.sh; source test/ship/server_dry_run.sh
#   ship_render_installs "$dir" && ship_server_dry_run "$KUBECONFIG" "$dir"/*.yaml; finish

ship_render_installs() {
  local dir=$1 profile name mode out
  mkdir -p "$dir"
  if find_helm; then
    for profile in "$REPO"/manifests/chart/gpuguard/ci/*-values.yaml; do
      name=$(basename "$profile" -values.yaml)
      "$HELM" template gpuguard "$REPO/manifests/chart/gpuguard" -n gpuguard-system -f "$profile" \
        >"$dir/chart-$name.yaml" 2>"$dir/chart-$name.log" || fail "helm template ($name): $(cat "$dir/chart-$name.log")"
    done
  else
    skip "chart renders: $HELM_MISSING"
  fi
  if find_kubectl_or_cached; then
    for mode in audit enforce; do
      out=$dir/certs-$mode
      if "$REPO/certs/make-certs.sh" --out "$out" --mode "$mode" >/dev/null 2>&1 &&
        "$KUBECTL" kustomize "$out" >"$dir/script-$mode.yaml" 2>"$dir/kz.log"; then
        :
      else
        fail "make-certs.sh --mode $mode + kubectl kustomize: $(cat "$dir/kz.log")"
      fi
    done
    local own=$dir/own-components rel
    mkdir -p "$own"
    rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$REPO" "$own")
    printf 'resources: [%s]\ncomponents: [%s, %s]\n' "$rel/manifests/overlays/enforce" \
      "$rel/manifests/components/network-policy" "$rel/manifests/components/monitoring" >"$own/kustomization.yaml"
    "$KUBECTL" kustomize "$own" >"$dir/kustomize-components.yaml" 2>"$dir/kz.log" || fail "kubectl kustomize components: $(cat "$dir/kz.log")"
  else
    skip "kustomize renders: $KUBECTL_MISSING"
  fi
}

# _ship_split FILE SERVED_OUT : writes the objects whose apiVersion the server serves; prints the others
_ship_split() {
  "$(python_with yaml)" - "$1" "$2" "$_SHIP_API_VERSIONS" <<'PYEOF'
import sys, yaml
src, dst, served = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
keep, left = [], []
for o in yaml.safe_load_all(open(src)):
    if not o:
        continue
    # Before 1.21 PodDisruptionBudgets are policy/v1beta1, with the same fields.
    if o.get("apiVersion") == "policy/v1" and "policy/v1" not in served and "policy/v1beta1" in served:
        o["apiVersion"] = "policy/v1beta1"
    (keep if o.get("apiVersion") in served else left).append(o)
with open(dst, "w") as f:
    yaml.safe_dump_all(keep, f, sort_keys=False)
print(" ".join(sorted({f'{o["kind"]} ({o["apiVersion"]})' for o in left})))
PYEOF
}

ship_server_dry_run() {
  local kubeconfig=$1 file name minor left served
  shift
  local k=("$KUBECTL" --kubeconfig "$kubeconfig" --request-timeout=60s)
  _SHIP_API_VERSIONS=$("${k[@]}" api-versions 2>/dev/null | tr '\n' ' ')
  minor=$("${k[@]}" version -o json 2>/dev/null | python3 -c 'import json,sys; v=json.load(sys.stdin)["serverVersion"]; print(int("".join(c for c in v["minor"] if c.isdigit())))' 2>/dev/null)
  if [[ -z $_SHIP_API_VERSIONS || -z $minor ]]; then
    fail "the API server does not answer (kubeconfig $kubeconfig)"
    return 1
  fi
  "${k[@]}" create namespace gpuguard-system >/dev/null 2>&1
  "${k[@]}" create namespace monitoring >/dev/null 2>&1
  for file in "$@"; do
    name=$(basename "$file" .yaml)
    if ((minor < 30)) && grep -q "matchConditions:" "$file"; then
      skip "$name: matchConditions need Kubernetes 1.30 (the server is 1.$minor)"
      continue
    fi
    served=${file%.yaml}.served.yaml
    left=$(_ship_split "$file" "$served")
    [[ -z $left ]] || skip "$name: not served by this API server, left out: $left"
    if "${k[@]}" apply --dry-run=server --validate=strict -f "$served" >"$served.log" 2>&1; then
      ok "$name: $(grep -c 'created (server dry run)' "$served.log") objects accepted by kube-apiserver 1.$minor (server dry run, strict fields)"
    else
      fail "$name: rejected by the API server: $(grep -v '^Warning: resource namespaces' "$served.log" | head -c 3000)"
    fi
  done
}
