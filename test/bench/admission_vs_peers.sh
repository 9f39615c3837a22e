#!/usr/bin/env bash
# What admission costs a pod create, side by side in one run against the e2e
# control plane (test/e2e/lib.sh: etcd + kube-apiserver on 127.0.0.1):
#   none      no admission webhook or policy for pods
#   vap       a ValidatingAdmissionPolicy (CEL, in the API server) with the
#             quantity rules: nvidia.com/gpu a whole number, requests equal to limits
#   gpuguard  gpuguard-webhook behind a ValidatingWebhookConfiguration
#             (failurePolicy Fail, timeoutSeconds 10)
# Informational: the API server's own work dominates, and it shares the cores.
#
#   test/bench/admission_vs_peers.sh [-n CREATES] [-r REPS] [BUILD_DIR]
#     BUILD_DIR   where gpuguard-webhook was built (default build)
#     -n CREATES  sequential pod creates per measurement, on one keep-alive
#                 connection (default 300), after 30 for warm-up
#     -r REPS     the three configurations alternated REPS times (default 2); medians
#
# Each create is POST /api/v1/namespaces/bench/pods?dryRun=All of a valid GPU
# pod (dry-run: admission runs in full, webhooks included, and etcd is not
# written, so the runs do not depend on the size of the store). Prints p50,
# p99 and mean per configuration, then what vap and gpuguard add to the p50
# of none. Needs a kube-apiserver with admissionregistration.k8s.io/v1
# ValidatingAdmissionPolicy (Kubernetes 1.30 or later); with an older one it
# says so and exits 0 without measuring.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
N=300 REPS=2
while getopts "n:r:h" o; do
  case $o in
    n) N=$OPTARG ;; r) REPS=$OPTARG ;;
    *) sed -n '2,24p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD_DIR=${1:-$ROOT/build}
WEBHOOK=$BUILD_DIR/gpuguard-webhook
[ -x "$WEBHOOK" ] || { echo "admission_vs_peers.sh: no gpuguard-webhook in $BUILD_DIR (build it first)" >&2; exit 2; }
# The perf engineer's ports (TEAM.md); lib.sh picks free ones from these bases.
export E2E_ETCD_PORT=${E2E_ETCD_PORT:-23400} E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-23443}
WH_PORT=${BENCH_WEBHOOK_PORT:-23500}
# shellcheck source=../e2e/lib.sh
source "$ROOT/test/e2e/lib.sh"

# In this shell (not a pipe): it sets the binaries' paths and kubectl's PATH.
tools=$(mktemp)
e2e_prepare_tools >"$tools" || { echo "admission_vs_peers.sh: no control plane (test/e2e/build-controlplane.sh)"; exit 1; }
sed 's/^/# /' "$tools"; rm -f "$tools"
e2e_init
e2e_start_cluster || { echo "admission_vs_peers.sh: the e2e control plane did not start (see above)"; exit 1; }
version=$(e2e_kubectl version -o json 2>/dev/null | python3 -c \
  'import json,sys; v=json.load(sys.stdin)["serverVersion"]; print(v["major"], v["minor"].rstrip("+"))')
read -r major minor <<<"$version"
if [ "${major:-0}" -lt 1 ] || { [ "$major" -eq 1 ] && [ "${minor:-0}" -lt 30 ]; }; then
  echo "# admission_vs_peers: kube-apiserver $major.$minor has no ValidatingAdmissionPolicy v1 (1.30+):"
  echo "# this benchmark waits for the current control plane in test/e2e; nothing measured"
  exit 0
fi
e2e_ns bench || exit 1

# --- gpuguard-webhook with a CA of its own
WH=$E2E_WORK/webhook
mkdir -p "$WH"
e2e_make_ca "$WH" ca
e2e_make_cert "$WH" ca tls "/CN=127.0.0.1" serverAuth "IP:127.0.0.1"
e2e_bg webhook "$WEBHOOK" --tls-cert-file="$WH/tls.crt" --tls-private-key-file="$WH/tls.key" \
  --bind-address=127.0.0.1 --port="$WH_PORT" --log-level=warn
e2e_wait_for "gpuguard-webhook" 30 curl -sk --max-time 2 "https://127.0.0.1:$WH_PORT/healthz" || exit 1
CA_BUNDLE=$(base64 -w0 "$WH/ca.crt")

cat >"$E2E_WORK/webhook.yaml" <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: bench-gpuguard}
webhooks:
- name: validate.gpuguard.bench
  clientConfig: {url: "https://127.0.0.1:$WH_PORT/validate", caBundle: "$CA_BUNDLE"}
  rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: bench}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 10
EOF
# The quantity rules as CEL: what a ValidatingAdmissionPolicy can say about
# nvidia.com/gpu (integer; requests equal limits; requests only with limits).
cat >"$E2E_WORK/vap.yaml" <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-gpu-quantities}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"]}
  variables:
  - name: containers
    expression: >-
      object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])
  validations:
  - expression: >-
      variables.containers.all(c, !has(c.resources) || !has(c.resources.limits) ||
        !('nvidia.com/gpu' in c.resources.limits) || quantity(c.resources.limits['nvidia.com/gpu']).isInteger())
    message: "resources.limits[nvidia.com/gpu] must be a whole number"
  - expression: >-
      variables.containers.all(c, !has(c.resources) || !has(c.resources.requests) ||
        !('nvidia.com/gpu' in c.resources.requests) ||
        (has(c.resources.limits) && 'nvidia.com/gpu' in c.resources.limits &&
         quantity(c.resources.requests['nvidia.com/gpu']).compareTo(quantity(c.resources.limits['nvidia.com/gpu'])) == 0))
    message: "resources.requests[nvidia.com/gpu] must equal resources.limits[nvidia.com/gpu]"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bench-gpu-quantities}
spec:
  policyName: bench-gpu-quantities
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: bench}}
EOF

configure() {  # configure none|vap|gpuguard
  e2e_kubectl delete validatingwebhookconfiguration bench-gpuguard --ignore-not-found >/dev/null
  e2e_kubectl delete validatingadmissionpolicybinding bench-gpu-quantities --ignore-not-found >/dev/null
  e2e_kubectl delete validatingadmissionpolicy bench-gpu-quantities --ignore-not-found >/dev/null
  case $1 in
    vap) e2e_kubectl apply -f "$E2E_WORK/vap.yaml" >/dev/null ;;
    gpuguard) e2e_kubectl apply -f "$E2E_WORK/webhook.yaml" >/dev/null ;;
  esac
  sleep 2  # the API server's admission configuration follows its informers
}

# measure NAME : N sequential dry-run creates; one line "p50 p99 mean" in ms
measure() {
  python3 - "$E2E_APISERVER_PORT" "$E2E_WORK/pki" "$N" "$1" <<'PY'
import http.client, json, ssl, statistics, sys, time
port, pki, n, name = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
ctx.load_cert_chain(f"{pki}/admin.crt", f"{pki}/admin.key")
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "bench-", "namespace": "bench"},
       "spec": {"containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                                "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}],
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "nodeSelector": {"nvidia.com/cuda.driver.major": "550"}}}
body = json.dumps(pod).encode()
conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
def create():
    conn.request("POST", "/api/v1/namespaces/bench/pods?dryRun=All", body, {"Content-Type": "application/json"})
    r = conn.getresponse(); data = r.read()
    if r.status != 201: sys.exit(f"{name}: HTTP {r.status}: {data[:300]!r}")
for _ in range(30): create()
lat = []
for _ in range(n):
    t = time.perf_counter(); create(); lat.append((time.perf_counter() - t) * 1e3)
lat.sort()
print(f"{lat[len(lat) // 2]:.3f} {lat[min(len(lat) - 1, int(len(lat) * 0.99))]:.3f} {statistics.mean(lat):.3f}")
PY
}

echo "# admission_vs_peers: $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# kube-apiserver $major.$minor, $N dry-run pod creates per run, medians of $REPS"
for _ in $(seq 1 "$REPS"); do
  for cfg in none vap gpuguard; do
    configure "$cfg"
    line=$(measure "$cfg") || { echo "admission_vs_peers.sh: $line" >&2; exit 1; }
    echo "$line" >>"$E2E_WORK/res.$cfg"
    read -r p50 p99 mean <<<"$line"
    printf '%-9s p50 %7.3f ms  p99 %7.3f ms  mean %7.3f ms\n' "$cfg" "$p50" "$p99" "$mean"
  done
done
configure none
med() { cut -d' ' -f"$2" "$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
n50=$(med "$E2E_WORK/res.none" 1)
for cfg in vap gpuguard; do
  awk -v c="$cfg" -v p="$(med "$E2E_WORK/res.$cfg" 1)" -v q="$(med "$E2E_WORK/res.$cfg" 2)" -v n="$n50" \
    'BEGIN { printf "admission %s: p50 %.3f ms (+%.3f ms over none), p99 %.3f ms\n", c, p, p - n, q }'
done
