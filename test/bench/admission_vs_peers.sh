#!/usr/bin/env bash
# gpuguard against what a cluster admin would pick instead, side by side in one run against
# the e2e control plane (test/e2e/lib.sh: etcd + kube-apiserver v1.37 on 127.0.0.1):
#   none        no admission webhook or policy for pods
#   vap         a ValidatingAdmissionPolicy (CEL, in the API server) with gpuguard's seed rules
#   kyverno     Kyverno's admission controller (out of cluster, --serverIP, as its DEVELOPMENT.md
#               runs it; its install manifest applied) with the same rules as a ValidatingPolicy
#   gatekeeper  OPA Gatekeeper's manager (out of cluster, --disable-cert-rotation; its manifest
#               applied, its webhook registered by URL) with the rules as a Rego ConstraintTemplate
#   noop        the floor: the smallest correct webhook (test/bench/peers/noop-webhook: Go, standard
#               library; decodes the review, echoes its uid, allows), registered as gpuguard is;
#               it offers h2 by ALPN, as Go servers do
#   noop-h1     the same offering HTTP/1.1 only, as gpuguard-webhook does: the like-for-like floor
#   gpuguard    gpuguard-webhook behind a ValidatingWebhookConfiguration (Fail, 10 s)
# The policies are test/bench/peers/policies/*.yaml, written as each tool's users write them.
# For each: p50/p99 of a valid GPU pod's dry-run create, and which of the GPU mistakes in
# test/bench/peers/mistakes.yaml it catches (denied or warned; "api": the API server itself
# refuses the object before any webhook). The peers are built once by
# test/bench/peers/build-peers.sh (Go module proxy, cache outside the tree); -P skips them.
#
#   test/bench/admission_vs_peers.sh [-n CREATES] [-r REPS] [-P] [BUILD_DIR]
#     BUILD_DIR   where gpuguard-webhook was built (default build)
#     -n CREATES  sequential pod creates per measurement, on one keep-alive
#                 connection (default 300), after 30 for warm-up
#     -r REPS     the configurations alternated REPS times (default 2); medians
#     -P          without Kyverno and Gatekeeper
#     -c "CFG..." only these configurations (none is always measured: the others are added to it)
#
# Each create is POST /api/v1/namespaces/bench/pods?dryRun=All of a valid GPU
# pod (dry-run: admission runs in full, webhooks included, and etcd is not
# written, so the runs do not depend on the size of the store). Prints p50,
# p99 and mean per configuration, then what each adds to none; for the webhooks,
# the connections the API server opened, the time their handler took per review,
# and gpuguard's margin over the no-op's (the floor). Needs a kube-apiserver with
# admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes 1.30 or
# later); with an older one it says so and exits 0 without measuring.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
N=300 REPS=2 PEERS=1 ONLY=""
while getopts "n:r:c:Ph" o; do
  case $o in
    n) N=$OPTARG ;; r) REPS=$OPTARG ;; P) PEERS=0 ;; c) ONLY=$OPTARG ;;
    *) sed -n '2,36p' "$0"; exit 2 ;;
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
e2e_kubectl label namespace bench gpuguard-bench=peers --overwrite >/dev/null || exit 1

source "$HERE/peers/admission_peers.sh"
