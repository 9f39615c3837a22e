#!/usr/bin/env bash
# The cluster facts (docs/cluster-facts.md) on the real control plane: gpuguard-webhook with a
# kubeconfig holding a least-privilege ServiceAccount token (the shipped ClusterRole,
# manifests/base/rbac.yaml) lists and watches nodes, namespaces, DRA objects, RuntimeClasses and
# Karpenter NodePools; keeps answering while kube-apiserver restarts and resyncs after; relists after
# 410 Gone (etcd compacted while the API server was down); judges without facts when RBAC
# refuses them, and says so, failing open on what the facts could overturn; gpuguard-lint
# --cluster lists them once.
#
#   bash test/e2e/cluster-facts.sh      (run.sh runs it too)
#
#   GPUGUARD_WEBHOOK, GPUGUARD_LINT   binaries (default <repo>/build/...)
#   E2E_FACTS_PORT                    first webhook port (default 20560; three are used)
# Prints one "ok - ..." / "FAIL - ..." line per case and "N passed, M failed".
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"
T0=$SECONDS
WEBHOOK=${GPUGUARD_WEBHOOK:-$ROOT/build/gpuguard-webhook}
LINT=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
PASSED=0 FAILED=0

ok() { echo "ok - $*"; PASSED=$((PASSED + 1)); }
bad() { echo "FAIL - $*"; FAILED=$((FAILED + 1)); }
finish() { echo "cluster-facts: took $((SECONDS - T0)) s"; echo "$PASSED passed, $FAILED failed"; exit $((FAILED > 0)); }
# until_true TIMEOUT_S CMD... : poll CMD every 0.2 s
until_true() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do ((SECONDS < deadline)) || return 1; sleep 0.2; done
}

[[ -x $WEBHOOK && -x $LINT ]] || { bad "setup: no $WEBHOOK or $LINT"; finish; }
e2e_prepare_tools || { bad "setup: building the control plane"; finish; }
e2e_init
# PodNodeSelector (off by default) for the namespace node selector case; the default plugins stay on.
E2E_APISERVER_EXTRA_ARGS=(--enable-admission-plugins=PodNodeSelector)
e2e_start_cluster || { bad "setup: cluster did not start"; finish; }
W=$E2E_WORK/facts
mkdir -p "$W"
kc() { e2e_kubectl "$@"; }

# ---- objects: GPU nodes, a namespace, a NodePool CRD and NodePool ------------------------------
e2e_add_gpu_node gpu-a 550 && e2e_add_gpu_node gpu-b 550 || { bad "setup: GPU nodes"; finish; }
kc apply -f - >/dev/null <<'EOF' || { bad "setup: the NodePool CRD"; finish; }
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nodepools.karpenter.sh}
spec:
  group: karpenter.sh
  names: {kind: NodePool, plural: nodepools, singular: nodepool, listKind: NodePoolList}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
EOF
until_true 30 kc get nodepools.karpenter.sh -o name >/dev/null 2>&1 || { bad "setup: the NodePool CRD is not served"; finish; }
kc apply -f - >/dev/null <<'EOF' || { bad "setup: NodePool, namespace"; finish; }
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: ["8"]}
      taints:
      - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
  limits: {nvidia.com/gpu: "64"}
---
apiVersion: v1
kind: Namespace
metadata:
  name: ml
  annotations:
    scheduler.alpha.kubernetes.io/defaultTolerations: '[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]'
EOF

e2e_ns_prepare ml || { bad "setup: namespace ml"; finish; }

# ---- a least-privilege ServiceAccount (the shipped ClusterRole) and one with no RBAC at all ----------
kc create namespace gpuguard-system >/dev/null
kc create serviceaccount gpuguard-webhook -n gpuguard-system >/dev/null
kc create serviceaccount nobody -n gpuguard-system >/dev/null
kc apply -f "$ROOT/manifests/base/rbac.yaml" >/dev/null || { bad "setup: manifests/base/rbac.yaml"; finish; }
e2e_token_kubeconfig gpuguard-webhook gpuguard-system >"$W/webhook.kubeconfig" &&
    e2e_token_kubeconfig nobody gpuguard-system >"$W/nobody.kubeconfig" ||
    { bad "setup: ServiceAccount tokens"; finish; }
# the ClusterRole really is least privilege: no secrets, no writes
if KUBECONFIG=$W/webhook.kubeconfig e2e_kubectl auth can-i list secrets -A >/dev/null 2>&1 ||
   KUBECONFIG=$W/webhook.kubeconfig e2e_kubectl auth can-i patch nodes >/dev/null 2>&1; then
    bad "setup: the shipped ClusterRole grants more than get/list/watch"
fi

# ---- the webhooks --------------------------------------------------------------------------------
e2e_make_ca "$W" ca
e2e_make_cert "$W" ca serving "/CN=gpuguard-facts-e2e" serverAuth "IP:127.0.0.1"
PORT=$(e2e_pick_port "${E2E_FACTS_PORT:-20560}" 3) || { bad "setup: no free port"; finish; }
start() {  # start NAME PORT KUBECONFIG
    e2e_bg "webhook-$1" "$WEBHOOK" --tls-cert-file="$W/serving.crt" --tls-private-key-file="$W/serving.key" \
        --port="$2" --bind-address=127.0.0.1 --kubeconfig="$3" --cluster-facts=on
    until_true 30 curl -sf --cacert "$W/ca.crt" "https://127.0.0.1:$2/healthz" -o /dev/null
}
metrics() { curl -sS --max-time 3 --cacert "$W/ca.crt" "https://127.0.0.1:$1/metrics"; }
metric() {  # metric PORT SERIES -> its value ("" if absent)
    metrics "$1" | awk -v s="$2" '$1 == s { print $2 }'
}
metric_is() { [[ $(metric "$1" "$2") == "$3" ]]; }
# a GPU pod's AdmissionReview, answered 200 whatever the facts say
review_ok() {  # review_ok PORT
    local body
    body='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"e2e-facts","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"ml","operation":"CREATE","userInfo":{"username":"e2e"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},"spec":{"containers":[{"name":"c","image":"nvcr.io/nvidia/pytorch:24.05-py3","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}'
    [[ $(curl -sS -o "$W/review.json" -w '%{http_code}' --max-time 5 --cacert "$W/ca.crt" \
        -H 'Content-Type: application/json' --data "$body" "https://127.0.0.1:$1/validate") == 200 ]] &&
        grep -q '"uid":"e2e-facts"' "$W/review.json"
}
restarts_of() { metric "$1" "gpuguard_cluster_facts_watch_restarts_total{resource=\"$2\"}"; }
relists_total() {
    metrics "$1" | awk '$1 ~ /^gpuguard_cluster_facts_relists_total/ { n += $2 } END { print n + 0 }'
}

if ! start facts "$PORT" "$W/webhook.kubeconfig"; then bad "setup: gpuguard-webhook with facts"; finish; fi

# ---- cases ----------------------------------------------------------------------------------------
synced_all() {
    metric_is "$PORT" gpuguard_cluster_facts_in_use 1 &&
        for r in nodes namespaces nodepools.karpenter.sh deviceclasses.resource.k8s.io \
                 resourceclaimtemplates.resource.k8s.io resourceclaims.resource.k8s.io resourceslices.resource.k8s.io \
                 runtimeclasses.node.k8s.io; do
            metric_is "$PORT" "gpuguard_cluster_facts_synced{resource=\"$r\"}" 1 || return 1
        done
}
t=$SECONDS
if until_true 20 synced_all && metric_is "$PORT" 'gpuguard_cluster_facts_objects{resource="nodes"}' 2 &&
   metric_is "$PORT" 'gpuguard_cluster_facts_objects{resource="nodepools.karpenter.sh"}' 1; then
    ok "a least-privilege ServiceAccount token lists and watches every fact resource: gpuguard_cluster_facts_synced 1 in $((SECONDS - t)) s (2 nodes, 1 NodePool)"
else
    bad "facts synced with the shipped ClusterRole: $(metrics "$PORT" | grep '^gpuguard_cluster_facts' | tr '\n' ' ')"
fi

t=$SECONDS
e2e_add_gpu_node gpu-c 570
if until_true 10 metric_is "$PORT" 'gpuguard_cluster_facts_objects{resource="nodes"}' 3; then
    ok "a node created is in the facts $((SECONDS - t)) s later (the watch)"
else
    bad "node gpu-c never reached the facts"
fi

# The driver pin enforced with facts: the API server sends pod creates in namespace ml to the
# webhook; while the GPU nodes run drivers 550 and 570 an unpinned pod is denied, after gpu-c is
# relabelled to 550 it is allowed (with a warning), without a restart.
# facts_vwc NAME RESOURCE PORT NAMESPACE : a ValidatingWebhookConfiguration sending CREATEs of
# RESOURCE ("pods" or "deployments") in NAMESPACE to the webhook on PORT
facts_vwc() {
    local group='""'
    [[ $2 == deployments ]] && group='"apps"'
    cat <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: $1}
webhooks:
- name: validate.$1.gpuguard.e2e
  clientConfig: {url: "https://127.0.0.1:$3/validate", caBundle: "$(base64 -w0 "$W/ca.crt")"}
  rules: [{apiGroups: [$group], apiVersions: ["v1"], operations: ["CREATE"], resources: ["$2"]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $4}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 10
EOF
}
facts_vwc gpuguard-facts-e2e pods "$PORT" ml >"$W/vwc.yaml"
cat >"$W/unpinned.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: unpinned, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: c
    image: nvidia/cuda:12.8.1-runtime-ubuntu24.04
    resources: {limits: {nvidia.com/gpu: "1"}}
EOF
# CUDA 12.8 is native to the 570 branch, not to 550: with both reachable, the unpinned pod may land on
# a driver that runs it only through minor-version compatibility, so the pin is enforced (a CUDA 12.4
# image, native to both, would only be warned).
create_unpinned() { e2e_kubectl create --dry-run=server -f "$W/unpinned.yaml" >"$W/create.out" 2>&1; }
denied_for_drivers() { ! create_unpinned && grep -q 'gpu-missing-driver-pin' "$W/create.out"; }
if kc apply -f "$W/vwc.yaml" >/dev/null && until_true 20 denied_for_drivers; then
    denial=$(grep -o 'run 2 CUDA driver majors[^;]*' "$W/create.out" | head -1)
    kc label node gpu-c nvidia.com/cuda.driver.major=550 --overwrite >/dev/null
    t=$SECONDS
    if until_true 20 create_unpinned; then
        ok "mixed drivers deny an unpinned CUDA 12.8 pod (${denial:-$(head -c 200 "$W/create.out")}); relabelled to one driver, it is allowed $((SECONDS - t)) s later, without a restart"
    else
        bad "after the relabel to one driver the unpinned pod is still refused: $(cat "$W/create.out")"
    fi
else
    bad "mixed drivers: the unpinned pod was not denied for its driver pin: $(cat "$W/create.out")"
fi
kc delete validatingwebhookconfiguration gpuguard-facts-e2e >/dev/null

# DRA (red team 32 B2): a node whose GPUs only a DRA driver publishes (a ResourceSlice; no GPU in
# allocatable, no GFD label, no taint). kube-scheduler places a pod with a GPU claim and no toleration
# there, so the webhook allows it (the tainted device-plugin nodes gpu-a..c do not serve claims); once
# the DRA node carries nvidia.com/gpu:NoSchedule, the same pod is denied for the toleration.
kc apply -f - >/dev/null <<'EOF' || bad "setup: DRA objects"
apiVersion: v1
kind: Namespace
metadata: {name: dra}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: two-gpus, namespace: dra}
spec:
  devices:
    requests:
    - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}
EOF
kc create -f - >/dev/null <<'EOF' || bad "setup: node dra-node"
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "dra-node", "labels": {"kubernetes.io/hostname": "dra-node"}},
 "status": {"capacity": {"cpu": "96", "memory": "1Ti", "pods": "110"},
            "allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}]}}
EOF
kc taint node dra-node node.kubernetes.io/not-ready:NoSchedule- >/dev/null
kc create -f - >/dev/null <<'EOF' || bad "setup: ResourceSlice"
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dra-node-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: dra-node
  pool: {name: dra-node, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
EOF
dra_review() {  # dra_review PORT -> the AdmissionReview answer in $W/dra.json
    local body
    body='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"e2e-dra","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"dra","operation":"CREATE","userInfo":{"username":"e2e"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dra-pod","namespace":"dra"},"spec":{"resourceClaims":[{"name":"g","resourceClaimName":"two-gpus"}],"containers":[{"name":"c","image":"nvidia/cuda:12.8.1-runtime-ubuntu24.04","resources":{"claims":[{"name":"g"}]}}]}}}}'
    curl -sS -o "$W/dra.json" --max-time 5 --cacert "$W/ca.crt" -H 'Content-Type: application/json' \
        --data "$body" "https://127.0.0.1:$1/validate"
}
dra_allowed() {
    dra_review "$PORT" && grep -q '"allowed":true' "$W/dra.json" && ! grep -q gpu-missing-toleration "$W/dra.json"
}
dra_denied() {
    dra_review "$PORT" && grep -q '"allowed":false' "$W/dra.json" && grep -q gpu-missing-toleration "$W/dra.json"
}
if until_true 20 metric_is "$PORT" 'gpuguard_cluster_facts_objects{resource="resourceslices.resource.k8s.io"}' 1 &&
   until_true 10 dra_allowed; then
    kc taint node dra-node nvidia.com/gpu=present:NoSchedule >/dev/null
    if until_true 20 dra_denied; then
        ok "a GPU claim pod without toleration: allowed while its ResourceSlice's node is untainted, denied once that node carries nvidia.com/gpu:NoSchedule"
    else
        bad "DRA node tainted: the claim pod is not denied for the toleration: $(head -c 400 "$W/dra.json")"
    fi
else
    bad "DRA-only node: the claim pod is not allowed: $(head -c 400 "$W/dra.json"); $(metrics "$PORT" | grep resourceslices | tr '\n' ' ')"
fi

# Taints with facts (red team 32 B8, B9): the GPU nodes' own taints, matched as kube-scheduler does.
# A GPU node tainted only sku=gpu:NoSchedule (AKS's GPU pool taint): a pod selecting it without that
# toleration is denied naming it; with it, allowed; an Equal toleration of another value is denied.
# (scheduler/cases.yaml facts-taint-other-key / facts-taint-equal-other-value: kube-scheduler leaves
# such pods Pending.)
kc create -f - >/dev/null <<'EOF' || bad "setup: node aks-gpu"
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "aks-gpu", "labels": {"kubernetes.io/hostname": "aks-gpu", "pool": "aks"}},
 "spec": {"taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]},
 "status": {"capacity": {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"},
            "allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}]}}
EOF
kc taint node aks-gpu node.kubernetes.io/not-ready:NoSchedule- >/dev/null
taint_review() {  # taint_review TOLERATIONS_JSON -> the AdmissionReview answer in $W/taint.json
    local body
    body='{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"e2e-taint","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"dra","operation":"CREATE","userInfo":{"username":"e2e"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"aks-pod","namespace":"dra"},"spec":{"nodeSelector":{"pool":"aks"},"tolerations":'"$1"',"containers":[{"name":"c","image":"nvidia/cuda:12.8.1-runtime-ubuntu24.04","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}'
    curl -sS -o "$W/taint.json" --max-time 5 --cacert "$W/ca.crt" -H 'Content-Type: application/json' \
        --data "$body" "https://127.0.0.1:$PORT/validate"
}
aks_denied() { taint_review '[]' && grep -q '"allowed":false' "$W/taint.json" && grep -q 'taint sku=gpu:NoSchedule' "$W/taint.json"; }
if until_true 20 aks_denied; then
    taint_review '[{"key":"sku","operator":"Equal","value":"gpu","effect":"NoSchedule"}]'
    # No finding at all: with facts the nodes the pod selects decide, even while aks-gpu's not-ready
    # taint is still in the webhook's facts (red team 33 C7: no --platform aks hint with facts).
    tolerated=$(grep -c gpu-missing-toleration "$W/taint.json")
    taint_review '[{"key":"sku","operator":"Equal","value":"cpu","effect":"NoSchedule"}]'
    if ((tolerated == 0)) && grep -q '"allowed":false' "$W/taint.json" && grep -q 'taint sku=gpu:NoSchedule' "$W/taint.json"; then
        ok "a GPU node tainted sku=gpu:NoSchedule: a pod without its toleration, or with Equal of another value, is denied naming it; tolerating it, allowed"
    else
        bad "sku=gpu taint: tolerated=$tolerated; Equal value cpu: $(head -c 400 "$W/taint.json")"
    fi
else
    bad "GPU node tainted sku=gpu:NoSchedule: a pod without toleration is not denied naming it: $(head -c 400 "$W/taint.json")"
fi
kc delete node aks-gpu >/dev/null

# RuntimeClass scheduling (red team 34 D2): the RuntimeClass admission plugin (on by default) merges
# the class's scheduling.nodeSelector into each pod's nodeSelector (a key set to another value: the pod
# is rejected) and appends its scheduling.tolerations. With GPU nodes on 550 and 570, a Deployment
# whose class pins 570 and tolerates the GPU taint is allowed; the same template without the class is
# denied (toleration, driver pin).
e2e_add_gpu_node gpu-d 570 && e2e_ns_prepare dra || bad "setup: node gpu-d, namespace dra"
kc apply -f - >/dev/null <<'EOF' || bad "setup: RuntimeClasses nvidia-gpu, nvidia"
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: nvidia-gpu}
handler: nvidia
scheduling:
  nodeSelector: {nvidia.com/cuda.driver.major: "570"}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
---
# the GPU Operator's class: a handler, no scheduling
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: nvidia}
handler: nvidia
EOF
# What the plugin does to a pod of that class (namespace dra: no webhook there).
rc_pod() {  # rc_pod NAME NODESELECTOR_JSON
    kc create -o json -f - 2>&1 <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1", "namespace": "dra"},
 "spec": {"runtimeClassName": "nvidia-gpu", "nodeSelector": $2,
          "containers": [{"name": "c", "image": "nvidia/cuda:12.8.1-runtime-ubuntu24.04", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
EOF
}
merged=$(rc_pod rc-merged '{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}' |
    python3 -c 'import json,sys; s=json.load(sys.stdin)["spec"]; print(sorted(s["nodeSelector"].items()), [t["key"] for t in s["tolerations"]])' 2>&1)
conflict=$(rc_pod rc-conflict '{"nvidia.com/cuda.driver.major": "550"}')
if [[ $merged == *"('nvidia.com/cuda.driver.major', '570'), ('nvidia.com/gpu.product', 'NVIDIA-H100-80GB-HBM3')"*"'nvidia.com/gpu'"* &&
      $conflict == *"conflict: runtimeClass.scheduling.nodeSelector[nvidia.com/cuda.driver.major] = 570"* ]]; then
    ok "the RuntimeClass plugin merges the class's nodeSelector into the pod's and appends its tolerations ($merged); a key the pod sets to another value is rejected"
else
    bad "RuntimeClass plugin: merged=$merged; conflict=$(head -c 300 <<<"$conflict")"
fi
kc delete pod -n dra rc-merged --wait=false >/dev/null 2>&1
facts_vwc gpuguard-facts-deploy-e2e deployments "$PORT" ml >"$W/vwc-deploy.yaml"
rc_deployment() {  # rc_deployment POD_SPEC_LINE -> kubectl's answer in $W/rc.out
    kc create --dry-run=server -f - >"$W/rc.out" 2>&1 <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer-rc, namespace: ml}
spec:
  selector: {matchLabels: {app: infer-rc}}
  template:
    metadata: {labels: {app: infer-rc}}
    spec:
      $1
      containers:
      - name: c
        image: nvidia/cuda:12.8.1-runtime-ubuntu24.04
        resources: {limits: {nvidia.com/gpu: "1"}}
EOF
}
rc_denied() {  # rc_denied POD_SPEC_LINE : denied for the toleration and the driver pin
    ! rc_deployment "$1" && grep -q gpu-missing-toleration "$W/rc.out" && grep -q gpu-missing-driver-pin "$W/rc.out"
}
if kc apply -f "$W/vwc-deploy.yaml" >/dev/null &&
   until_true 20 metric_is "$PORT" 'gpuguard_cluster_facts_objects{resource="runtimeclasses.node.k8s.io"}' 2 &&
   until_true 20 rc_denied "terminationGracePeriodSeconds: 30" && rc_denied "runtimeClassName: nvidia"; then
    if rc_deployment "runtimeClassName: nvidia-gpu"; then
        ok "a Deployment whose RuntimeClass tolerates the GPU taint and pins driver 570 is allowed (nodes on 550 and 570); without a class, or with the GPU Operator's nvidia class (no scheduling), it is denied (toleration, driver pin)"
    else
        bad "the RuntimeClass-scheduled Deployment is refused: $(head -c 600 "$W/rc.out")"
    fi
    # A template whose nodeSelector contradicts its class: the plugin would reject every pod; the
    # denial quotes the plugin's own words, as the API server gave them for rc-conflict above.
    api_words=$(sed -n 's/.* is forbidden: //p' <<<"$conflict" | head -1)
    if ! rc_deployment $'runtimeClassName: nvidia-gpu\n      nodeSelector: {nvidia.com/cuda.driver.major: "550"}' &&
       grep -q node-selector-conflict "$W/rc.out" && [[ -n $api_words ]] && grep -qF "$api_words" "$W/rc.out"; then
        ok "a Deployment whose nodeSelector contradicts its RuntimeClass is denied [node-selector-conflict], quoting the API server's own words ($api_words)"
    else
        bad "RuntimeClass conflict: API server said '$api_words'; the webhook: $(head -c 600 "$W/rc.out")"
    fi
    # Red team 35 D4: a RuntimeClass applied with its Deployment (one kubectl apply; helm install creates
    # the Deployment first): the watch has not seen the class yet, so it is unknown, never absent: at
    # most a warning. Three tries, each a new class.
    admitted=0
    for i in 1 2 3; do
        kc apply -f - >"$W/rc-with.out" 2>&1 <<EOF && admitted=$((admitted + 1))
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: with-app-$i}
handler: nvidia
scheduling:
  nodeSelector: {nvidia.com/cuda.driver.major: "570"}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: with-rc-$i, namespace: ml}
spec:
  selector: {matchLabels: {app: with-rc-$i}}
  template:
    metadata: {labels: {app: with-rc-$i}}
    spec:
      runtimeClassName: with-app-$i
      containers:
      - name: c
        image: nvidia/cuda:12.8.1-runtime-ubuntu24.04
        resources: {limits: {nvidia.com/gpu: "1"}}
EOF
        kc delete deployment -n ml "with-rc-$i" --wait=false >/dev/null 2>&1
        kc delete runtimeclass "with-app-$i" --wait=false >/dev/null 2>&1
    done
    if ((admitted == 3)); then
        ok "a RuntimeClass applied in one kubectl apply with its Deployment: 3 of 3 admitted (a class not watched yet is unknown, not absent)"
    else
        bad "RuntimeClass applied with its Deployment: $admitted of 3 admitted: $(head -c 600 "$W/rc-with.out")"
    fi
else
    bad "RuntimeClass case setup: without the class the Deployment is not denied as expected: $(head -c 600 "$W/rc.out"); $(metrics "$PORT" | grep runtimeclasses | tr '\n' ' ')"
fi
kc delete validatingwebhookconfiguration gpuguard-facts-deploy-e2e >/dev/null

# A namespace node selector (red team 34 D4): with PodNodeSelector enabled (E2E_APISERVER_EXTRA_ARGS
# above) the API server merges scheduler.alpha.kubernetes.io/node-selector into every pod of the
# namespace. GPU nodes on 550 and 570, namespace pinned selects 570: an unpinned CUDA 12.8 Deployment
# is denied by the default policy (the plugin is off by default upstream: not credited, the denial
# says so) and allowed by a webhook whose policy sets assumePodNodeSelector: true.
kc apply -f - >/dev/null <<'EOF' || bad "setup: namespace pinned"
apiVersion: v1
kind: Namespace
metadata:
  name: pinned
  annotations: {scheduler.alpha.kubernetes.io/node-selector: "nvidia.com/cuda.driver.major=570"}
EOF
e2e_ns_prepare pinned || bad "setup: namespace pinned"
pinned_pod=$(kc create -o jsonpath='{.spec.nodeSelector}' -f - 2>&1 <<'EOF'
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ns-pinned", "namespace": "pinned"},
 "spec": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
          "containers": [{"name": "c", "image": "nvidia/cuda:12.8.1-runtime-ubuntu24.04", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
EOF
)
kc delete pod -n pinned ns-pinned --wait=false >/dev/null 2>&1
echo "assumePodNodeSelector: true" >"$W/nssel-policy.yaml"
NSSEL_PORT=$((PORT + 2))
e2e_bg webhook-nssel "$WEBHOOK" --tls-cert-file="$W/serving.crt" --tls-private-key-file="$W/serving.key" \
    --port="$NSSEL_PORT" --bind-address=127.0.0.1 --kubeconfig="$W/webhook.kubeconfig" --cluster-facts=on \
    --policy="$W/nssel-policy.yaml"
vwc_pinned() {  # vwc_pinned PORT : deployments of namespace pinned go to the webhook on PORT
    facts_vwc gpuguard-facts-pinned-e2e deployments "$1" pinned | kc apply -f - >/dev/null
}
ns_deployment() {  # -> kubectl's answer in $W/ns.out
    kc create --dry-run=server -f - >"$W/ns.out" 2>&1 <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer, namespace: pinned}
spec:
  selector: {matchLabels: {app: infer}}
  template:
    metadata: {labels: {app: infer}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: c
        image: nvidia/cuda:12.8.1-runtime-ubuntu24.04
        resources: {limits: {nvidia.com/gpu: "1"}}
EOF
}
ns_denied() { ! ns_deployment && grep -q 'only the PodNodeSelector admission plugin adds it' "$W/ns.out"; }
if [[ $pinned_pod == *'"nvidia.com/cuda.driver.major":"570"'*'"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"'* ]] &&
   vwc_pinned "$PORT" && until_true 20 ns_denied; then
    if until_true 30 metric_is "$NSSEL_PORT" gpuguard_cluster_facts_in_use 1 && vwc_pinned "$NSSEL_PORT" &&
       until_true 20 ns_deployment; then
        ok "PodNodeSelector merges the namespace's driver pin into its pods ($pinned_pod); an unpinned Deployment there is denied by default (the plugin is not credited, the denial says so) and allowed with assumePodNodeSelector: true"
    else
        bad "assumePodNodeSelector: the unpinned Deployment in namespace pinned is refused: $(head -c 600 "$W/ns.out")"
    fi
else
    bad "namespace node selector: pod nodeSelector=$pinned_pod; default policy: $(head -c 600 "$W/ns.out")"
fi
kc delete validatingwebhookconfiguration gpuguard-facts-pinned-e2e >/dev/null 2>&1
kc delete node gpu-d >/dev/null

# kube-apiserver restarted mid-run: the webhook answers throughout, then reconnects and resyncs.
before=$(restarts_of "$PORT" nodes)
e2e_stop_pid "$E2E_APISERVER_PID"
answered=0
for _ in 1 2 3; do review_ok "$PORT" && answered=$((answered + 1)); sleep 0.3; done
until_true 15 metric_is "$PORT" gpuguard_cluster_facts_in_use 0; down=$?
review_ok "$PORT" && answered=$((answered + 1))
e2e_start_apiserver || { bad "kube-apiserver did not come back"; finish; }
t=$SECONDS
if until_true 60 synced_all && ((answered == 4 && down == 0)) && (($(restarts_of "$PORT" nodes) > before)); then
    ok "kube-apiserver restarted: 4 of 4 reviews answered while it was down (facts withdrawn: in_use 0), resynced $((SECONDS - t)) s after it came back"
else
    bad "API server restart: $answered of 4 reviews answered, withdrawn=$((down == 0)), restarts $before -> $(restarts_of "$PORT" nodes), in_use $(metric "$PORT" gpuguard_cluster_facts_in_use)"
fi

# 410 Gone: with kube-apiserver down, objects change and etcd compacts its history; the watch
# cache the restarted API server builds starts after the webhook's resourceVersion.
etcd_api() { curl -sS --max-time 5 -X POST "http://127.0.0.1:$E2E_ETCD_PORT/v3/$1" -d "$2"; }
relists_before=$(relists_total "$PORT")
kc label node gpu-a e2e/touched=1 --overwrite >/dev/null
kc create configmap e2e-bump -n default >/dev/null
e2e_stop_pid "$E2E_APISERVER_PID"
rev=$(etcd_api kv/range '{"key":"AA=="}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
compacted=$(etcd_api kv/compaction "{\"revision\":\"$rev\",\"physical\":true}")
e2e_start_apiserver || { bad "kube-apiserver did not come back after the compaction"; finish; }
if until_true 60 synced_all && (($(relists_total "$PORT") > relists_before)); then
    ok "410 Gone after etcd compaction (revision $rev) relists: gpuguard_cluster_facts_relists_total $relists_before -> $(relists_total "$PORT")"
else
    bad "410 Gone: relists $relists_before -> $(relists_total "$PORT") (compaction: $compacted); $(grep -c 'relisting' "$E2E_WORK/webhook-facts.log") relisting log lines"
fi

# RBAC refused: the ServiceAccount without the ClusterRole; judged without facts, and said so.
if start nobody $((PORT + 1)) "$W/nobody.kubeconfig" &&
   until_true 15 metric_is $((PORT + 1)) 'gpuguard_cluster_facts_synced{resource="nodes"}' 0 &&
   metric_is $((PORT + 1)) gpuguard_cluster_facts_in_use 0 && review_ok $((PORT + 1)) &&
   grep -q '"cluster facts: nodes refused (judging without cluster facts): list nodes: nodes is forbidden' \
       "$E2E_WORK/webhook-nobody.log"; then
    ok "RBAC refused: judged without facts (gpuguard_cluster_facts_synced{resource=\"nodes\"} 0, in_use 0), the log says why"
else
    bad "RBAC refused: $(metrics $((PORT + 1)) | grep '^gpuguard_cluster_facts_synced' | tr '\n' ' '); log: $(grep -m1 refused "$E2E_WORK/webhook-nobody.log")"
fi

# Fail-safe: without facts the webhook must not deny what it would admit with them. The GPU pod
# of review_ok tolerates no taint: untainted GPU nodes (AKS, EKS node groups) would take it, so
# while the facts are refused the missing toleration is a warning that says so, not a denial.
failed_open() {
    review_ok $((PORT + 1)) && grep -q '"allowed":true' "$W/review.json" &&
        grep -q 'gpu-missing-toleration: cluster facts unavailable (nodes refused): judged against the policy' "$W/review.json"
}
if until_true 10 failed_open &&
   (($(metric $((PORT + 1)) 'gpuguard_admission_failed_open_total{rule="gpu-missing-toleration"}') >= 1)) &&
   grep -q '"failedOpen":\["gpu-missing-toleration"\]' "$E2E_WORK/webhook-nobody.log"; then
    ok "facts refused: a GPU pod without toleration is allowed with a warning that the facts were missing (failed open)"
else
    bad "facts refused: not failed open: $(head -c 600 "$W/review.json")"
fi

# gpuguard-lint --cluster: one list, no watch.
cat >"$W/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources: {limits: {nvidia.com/gpu: "1"}}
EOF
"$LINT" --cluster --kubeconfig "$W/webhook.kubeconfig" "$W/pod.yaml" >"$W/lint.out" 2>"$W/lint.err"; rc=$?
if ((rc == 0 || rc == 1)) && ! grep -q -- '--cluster' "$W/lint.err"; then
    ok "gpuguard-lint --cluster --kubeconfig (least-privilege token) judges against the cluster (exit $rc)"
else
    bad "gpuguard-lint --cluster: exit $rc: $(cat "$W/lint.err")"
fi
"$LINT" --cluster --kubeconfig "$W/nobody.kubeconfig" "$W/pod.yaml" >/dev/null 2>"$W/lint-nobody.err"; rc=$?
if ((rc == 2)) && grep -q 'warning: nodes: nodes is forbidden' "$W/lint-nobody.err" &&
   grep -q 'refused every list' "$W/lint-nobody.err"; then
    ok "gpuguard-lint --cluster with no RBAC: a warning per refused resource, exit 2"
else
    bad "gpuguard-lint --cluster with no RBAC: exit $rc: $(cat "$W/lint-nobody.err")"
fi
sed "s|127.0.0.1:$E2E_APISERVER_PORT|127.0.0.1:1|" "$W/webhook.kubeconfig" >"$W/unreachable.kubeconfig"
"$LINT" --cluster --kubeconfig "$W/unreachable.kubeconfig" "$W/pod.yaml" >/dev/null 2>"$W/lint-down.err"; rc=$?
if ((rc == 2)) && grep -q 'cannot reach the API server https://127.0.0.1:1' "$W/lint-down.err"; then
    ok "gpuguard-lint --cluster against an unreachable API server: exit 2, and says so"
else
    bad "gpuguard-lint --cluster unreachable: exit $rc: $(cat "$W/lint-down.err")"
fi

finish
