# shellcheck shell=bash
# ---- the shipped MutatingWebhookConfiguration (manifests/base): POST /mutate ----------------
# Registered with the shipped validating configuration, as installed: the API server calls
# /mutate first, stores the patched pod, and /validate judges what /mutate made. A pod in a
# namespace the webhooks skip (gpuguard.io/webhook=disabled) is the control: the same API
# server defaulting, no webhook.
case_begin "shipped MutatingWebhookConfiguration (manifests/base): a GPU pod is stored with the toleration and limit it lacked; a compliant pod unchanged; kubectl label/annotate of an existing Job and Deployment neither fails nor changes their template"
cat >"$E2E_WORK/mutate-unfixed.yaml" <<'EOF'
# GPU requests without a limit and no toleration for the GPU taint: /validate alone denies it.
apiVersion: v1
kind: Pod
metadata:
  name: pod-gpu-unfixed
spec:
  nodeSelector:
    nvidia.com/cuda.driver-version.major: "535"
  containers:
  - name: c
    image: busybox:1.36
    resources:
      requests:
        cpu: 500m
        nvidia.com/gpu: 1
EOF
legacy_workloads() {        # a Job and a Deployment whose GPU pod templates lack the GPU toleration
    local kind
    for kind in Job Deployment; do
        cat <<EOF
---
apiVersion: $([[ $kind == Job ]] && echo batch/v1 || echo apps/v1)
kind: $kind
metadata:
  name: legacy-$(tr 'A-Z' 'a-z' <<<"$kind")
spec:
$([[ $kind == Deployment ]] && printf '  selector:\n    matchLabels: {app: legacy}\n')
  template:
    metadata:
      labels: {app: legacy}
    spec:
$([[ $kind == Job ]] && echo '      restartPolicy: Never')
      nodeSelector:
        nvidia.com/cuda.driver-version.major: "535"
      containers:
      - name: c
        image: busybox:1.36
        resources:
          limits:
            nvidia.com/gpu: 1
EOF
    done
}
# Issue 23: an UPDATE that does not touch the pod template gets no patch. Before, /mutate fixed
# the findings the old object already had: the API server refused the Job's label ("field is
# immutable": spec.template) and the Deployment's label changed its template (a new generation,
# a rollout). Now both are labelled and annotated as they were stored; the finding shows as a
# warning, as /validate says it on any UPDATE of a pre-existing problem.
update_existing_workloads_under_mwc() {
    local before after kind
    for kind in job deployment; do
        kc get "$kind" "legacy-$kind" -n e2e-mutate -o jsonpath='{.metadata.generation} {.spec.template}'
        before=$OUT
        kc label "$kind" "legacy-$kind" -n e2e-mutate team=ml
        expect_ok
        expect_out "legacy-$kind labeled"
        kc get "$kind" "legacy-$kind" -n e2e-mutate -o jsonpath='{.metadata.generation} {.spec.template}'
        after=$OUT
        [[ $before == "$after" ]] || problem "$kind: generation or template changed by a label: $before -> $after"
        # an annotation bumps a Deployment's generation by itself (apps/v1 PrepareForUpdate: its
        # annotations are copied to the ReplicaSets): only the template must stay as stored
        kc annotate "$kind" "legacy-$kind" -n e2e-mutate owner=e2e
        expect_ok
        expect_out "legacy-$kind annotated"
        kc get "$kind" "legacy-$kind" -n e2e-mutate -o jsonpath='{.spec.template}'
        [[ ${before#* } == "$OUT" ]] || problem "$kind: template changed by an annotation: ${before#* } -> $OUT"
    done
    kc delete job legacy-job -n e2e-mutate
    kc delete deployment legacy-deployment -n e2e-mutate
}
# Red team 34 D1: /mutate patched the ReplicaSet the Deployment controller creates; the stored
# template then differs from the Deployment's (EqualIgnoreHash), and the controller creates another,
# forever (kubernetes#57167). A ReplicaSet with a controller owner is never patched; /validate
# judges what the controller creates at its owner (a warning). The admin impersonates the
# Deployment controller (no controller manager runs here).
replicaset_of_a_deployment_under_mwc() {
    cat >"$E2E_WORK/owned-rs.yaml" <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: owned-6c7d8
  labels: {app: owned, pod-template-hash: 6c7d8}
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: owned, uid: 1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f, controller: true}
spec:
  replicas: 0
  selector:
    matchLabels: {app: owned, pod-template-hash: 6c7d8}
  template:
    metadata:
      labels: {app: owned, pod-template-hash: 6c7d8}
    spec:
      nodeSelector:
        nvidia.com/cuda.driver-version.major: "535"
      containers:
      - name: c
        image: busybox:1.36
        resources:
          limits:
            nvidia.com/gpu: 1
EOF
    kc create -n e2e-mutate -f "$E2E_WORK/owned-rs.yaml" --as=system:serviceaccount:kube-system:deployment-controller
    expect_ok
    expect_warning gpu-missing-toleration "created by its controller from Deployment/owned"
    kc get rs owned-6c7d8 -n e2e-mutate -o jsonpath='{.spec.template.spec.tolerations}'
    [[ $RC == 0 && -z $OUT ]] || problem "the Deployment's ReplicaSet was patched (or not stored): tolerations '$OUT'"
    kc delete rs owned-6c7d8 -n e2e-mutate
}
stored_spec() {             # stored_spec NAMESPACE POD > JSON of the stored spec (nodeName and the token volume's random name left out)
    kc get pod "$2" -n "$1" -o json
    ((RC == 0)) && python3 -c 'import json, re, sys
s = json.load(sys.stdin)["spec"]
s.pop("nodeName", None)
print(re.sub(r"kube-api-access-[a-z0-9]+", "kube-api-access-*", json.dumps(s, sort_keys=True)))' <<<"$OUT"
}
if [[ -s $E2E_WORK/shipped.yaml ]] &&
    python3 "$HERE/shipped-vwc.py" "$E2E_WORK/shipped.yaml" "https://127.0.0.1:$WH_PORT/mutate" "$WH/ca.crt" \
        MutatingWebhookConfiguration >"$E2E_WORK/shipped-mwc.yaml" 2>"$E2E_WORK/shipped-mwc.err"; then
    MWC_NAME=$(sed -n 's/^# configuration: //p' "$E2E_WORK/shipped-mwc.yaml")
    SHIPPED=$(sed -n 's/^# webhooks: \([^ ]*\).*/\1/p' "$E2E_WORK/shipped-vwc.yaml")
    e2e_ns e2e-mutate || problem "namespace e2e-mutate"
    # a Job and a Deployment stored before the webhooks existed, each with a finding /mutate
    # could fix (no toleration for the GPU taint): the "UPDATE of existing workloads" case below
    legacy_workloads >"$E2E_WORK/mutate-legacy.yaml"
    kc create -n e2e-mutate -f "$E2E_WORK/mutate-legacy.yaml"
    expect_ok
    kc apply -f "$E2E_WORK/shipped-vwc.yaml" -f "$E2E_WORK/shipped-mwc.yaml"
    expect_ok
    mutate_effective() {
        kc create --dry-run=server -n e2e-mutate -f "$E2E_WORK/mutate-unfixed.yaml" -o json
        ((RC == 0)) && grep -qF '"nvidia.com/gpu"' <<<"$(python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["spec"]["tolerations"]))' <<<"$OUT" 2>/dev/null)"
    }
    poll_until "shipped mutating webhook effective" 30 mutate_effective || problem "the shipped MutatingWebhookConfiguration does not patch the pod: $OUT"
    kc create -n e2e-mutate -f "$E2E_WORK/mutate-unfixed.yaml"
    expect_ok
    expect_out "pod/pod-gpu-unfixed created"
    expect_no_rule_warning
    kc get pod pod-gpu-unfixed -n e2e-mutate -o json
    note_output
    python3 - "$OUT" >"$E2E_WORK/mutate-check.out" 2>&1 <<'EOF'
import json, sys
spec = json.loads(sys.argv[1])["spec"]
c = spec["containers"][0]["resources"]
gpu = [t for t in spec.get("tolerations", []) if t.get("key") == "nvidia.com/gpu"]
problems = []
if gpu != [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]:
    problems.append("tolerations for nvidia.com/gpu: %s" % gpu)
if c.get("limits") != {"nvidia.com/gpu": "1"}:
    problems.append("limits: %s (want the request's nvidia.com/gpu: 1 only)" % c.get("limits"))
if c.get("requests") != {"cpu": "500m", "nvidia.com/gpu": "1"}:
    problems.append("requests changed: %s" % c.get("requests"))
if problems:
    print("; ".join(problems))
EOF
    [[ -s $E2E_WORK/mutate-check.out ]] && problem "stored pod: $(cat "$E2E_WORK/mutate-check.out")"
    # a compliant pod: stored exactly as in a namespace no webhook sees
    e2e_ns e2e-optout || problem "namespace e2e-optout"
    kc label namespace e2e-optout gpuguard.io/webhook=disabled --overwrite
    kc create -n e2e-mutate -f "$CASES/pod-gpu-good.yaml"
    expect_ok
    kc create -n e2e-optout -f "$CASES/pod-gpu-good.yaml"
    expect_ok
    stored_spec e2e-mutate pod-gpu-good >"$E2E_WORK/mutate-good.json" || problem "no stored pod-gpu-good in e2e-mutate: $OUT"
    stored_spec e2e-optout pod-gpu-good >"$E2E_WORK/optout-good.json" || problem "no stored pod-gpu-good in e2e-optout: $OUT"
    cmp -s "$E2E_WORK/mutate-good.json" "$E2E_WORK/optout-good.json" ||
        problem "the compliant pod was changed: $(diff "$E2E_WORK/optout-good.json" "$E2E_WORK/mutate-good.json" | head -c 600)"
    kc delete pod pod-gpu-unfixed pod-gpu-good -n e2e-mutate --grace-period=0 --force --timeout=30s
    kc delete pod pod-gpu-good -n e2e-optout --grace-period=0 --force --timeout=30s
    update_existing_workloads_under_mwc
    replicaset_of_a_deployment_under_mwc
    kc delete mutatingwebhookconfiguration "$MWC_NAME"
    expect_ok
    kc delete validatingwebhookconfiguration "$(sed -n 's/^# configuration: //p' "$E2E_WORK/shipped-vwc.yaml")"
    expect_ok
else
    problem "could not render the shipped MutatingWebhookConfiguration: $(head -c 600 "$E2E_WORK/shipped-mwc.err" 2>/dev/null)"
fi
case_end
