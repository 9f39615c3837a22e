#!/usr/bin/env bash
# load_vs_nginx.sh with the cluster facts on as well as off, in one run: starts the e2e control
# plane (test/e2e/lib.sh: etcd + kube-apiserver on 127.0.0.1), creates NODES GPU nodes as kubelets
# and GPU Feature Discovery write them (gen_nodes.py), then measures nginx, gpuguard-webhook with
# --cluster-facts=off ("webhook") and with --cluster-facts=on against that API server ("facts")
# side by side. On demand, not CI.
#
#   test/bench/load_vs_nginx_facts.sh [-n NODES] [load_vs_nginx.sh options...] [BUILD_DIR]
#     -n NODES   GPU nodes in the cluster (default 500); the other options go to load_vs_nginx.sh
#                (e.g. -c 32 -r 3 -d 10)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NODES=500
if [[ ${1:-} == -n ]]; then NODES=$2; shift 2; fi
export E2E_ETCD_PORT=${E2E_ETCD_PORT:-23600} E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-23643}
source "$ROOT/test/e2e/lib.sh"
echo "# uptime at the start: $(uptime)"
tools=$(mktemp)
e2e_prepare_tools >"$tools" || { echo "load_vs_nginx_facts.sh: no control plane"; exit 1; }
sed 's/^/# /' "$tools"; rm -f "$tools"
e2e_init
e2e_start_cluster || exit 1
python3 "$HERE/gen_nodes.py" "$NODES" "$E2E_WORK/nodes" | sed 's/^/# /'
for f in "$E2E_WORK"/nodes/nodes-*.json; do
  e2e_kubectl create -f "$f" >/dev/null || { echo "load_vs_nginx_facts.sh: creating nodes failed"; exit 1; }
done
# No node lifecycle controller runs here to lift TaintNodesByCondition's not-ready taint from the
# Ready nodes: lift it as it would (with it, every pod is unschedulable and the facts say so).
e2e_kubectl taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null ||
  { echo "lifting the not-ready taint failed"; exit 1; }
echo "# $NODES GPU nodes created; the facts webhook lists and watches them before the first run's warm-up"
# Only the "facts" variant may see the cluster: the plain webhook (--cluster-facts=auto) runs
# without $KUBECONFIG and finds no kubeconfig (checked), so it judges without facts.
kubeconfig=$KUBECONFIG
[[ ! -e $HOME/.kube/config ]] || { echo "load_vs_nginx_facts.sh: ~/.kube/config exists: the plain webhook would use it"; exit 2; }
env -u KUBECONFIG "$HERE/load_vs_nginx.sh" -v "facts=--cluster-facts=on,--kubeconfig=$kubeconfig" "$@"
