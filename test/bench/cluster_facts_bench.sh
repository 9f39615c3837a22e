#!/usr/bin/env bash
# What the cluster facts cost (docs/performance.md, "Cluster facts"), in one run against the
# e2e control plane (test/e2e/lib.sh: etcd + kube-apiserver on 127.0.0.1). On demand, not CI.
#
#   test/bench/cluster_facts_bench.sh [-n NODES] [-d SECONDS] [-r REPS] [BUILD_DIR]
#     -n NODES    GPU nodes created through the API server (default 5000), each as a kubelet
#                 writes it (~50 labels, conditions, 40 images, addresses): ~9 KB of JSON
#     -d SECONDS  each wrk measurement (default 10)
#     -r REPS     facts off / facts on alternated REPS times (default 3); medians
#
# Prints: the uptime load at the start; the time from the webhook's start to its first full
# sync (gpuguard_cluster_facts_in_use 1); the memory of a webhook with facts minus one without
# (VmRSS after the sync, and VmHWM); the API server's requests at the start (LIST requests and
# watches held, from its own /metrics); then /validate p50 and p99 (wrk, 2 connections, the
# ~5 KB GPU Pod AdmissionReview of load_vs_nginx.sh) with facts off and on, and the ratio.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NODES=5000 DURATION=10 REPS=3
while getopts "n:d:r:h" o; do
  case $o in
    n) NODES=$OPTARG ;; d) DURATION=$OPTARG ;; r) REPS=$OPTARG ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD_DIR=${1:-$ROOT/build}
WEBHOOK=$BUILD_DIR/gpuguard-webhook
[ -x "$WEBHOOK" ] || { echo "cluster_facts_bench.sh: no gpuguard-webhook in $BUILD_DIR" >&2; exit 2; }
command -v wrk >/dev/null || { echo "cluster_facts_bench.sh: needs wrk (apt-get install wrk)" >&2; exit 2; }
SAMPLE=$(ls "$ROOT"/../shared/reference/admission-samples/raw/03-CREATE-Pod-*allowed.json 2>/dev/null | head -1)
[ -f "$SAMPLE" ] || { echo "cluster_facts_bench.sh: no admission sample (shared/reference/admission-samples)" >&2; exit 2; }
export E2E_ETCD_PORT=${E2E_ETCD_PORT:-23600} E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-23643}
# shellcheck source=../e2e/lib.sh
source "$ROOT/test/e2e/lib.sh"
echo "# uptime at the start: $(uptime)"
tools=$(mktemp)
e2e_prepare_tools >"$tools" || { echo "cluster_facts_bench.sh: no control plane"; exit 1; }
sed 's/^/# /' "$tools"; rm -f "$tools"
e2e_init
e2e_start_cluster || exit 1
W=$E2E_WORK/bench
mkdir -p "$W"

# ---- NODES GPU nodes, as kubelets and GPU Feature Discovery write them ---------------------------
python3 "$HERE/gen_nodes.py" "$NODES" "$W"
t=$SECONDS
for f in "$W"/nodes-*.json; do e2e_kubectl create -f "$f" >/dev/null || { echo "creating nodes failed"; exit 1; }; done
# No node lifecycle controller runs here to lift TaintNodesByCondition's not-ready taint from the
# Ready nodes: lift it as it would (with it, every pod is unschedulable and the facts say so).
e2e_kubectl taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null ||
  { echo "lifting the not-ready taint failed"; exit 1; }
echo "# $NODES nodes created in $((SECONDS - t)) s"

# ---- two webhooks: facts off and facts on ------------------------------------------------------
e2e_make_ca "$W" ca
e2e_make_cert "$W" ca tls "/CN=127.0.0.1" serverAuth "IP:127.0.0.1"
OFF=$(e2e_pick_port 23700 1) ON=$((OFF + 1))
apiserver_metric() {  # apiserver_metric AWK_REGEX -> the sum of the matching series
  curl -sS --cacert "$E2E_WORK/pki/ca.crt" --cert "$E2E_WORK/pki/admin.crt" --key "$E2E_WORK/pki/admin.key" \
    "https://127.0.0.1:$E2E_APISERVER_PORT/metrics" | awk -v re="$1" '$1 ~ re { n += $2 } END { printf "%d", n }'
}
metric() { curl -sS --cacert "$W/ca.crt" "https://127.0.0.1:$1/metrics" | awk -v s="$2" '$1 == s { print $2 }'; }
rss_kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }

e2e_bg webhook-off "$WEBHOOK" --tls-cert-file="$W/tls.crt" --tls-private-key-file="$W/tls.key" \
  --bind-address=127.0.0.1 --port="$OFF" --log-level=warn --cluster-facts=off
PID_OFF=$E2E_LAST_PID
lists0=$(apiserver_metric '^apiserver_request_total\\{.*verb="LIST"')
watches0=$(apiserver_metric '^apiserver_longrunning_requests\\{.*verb="WATCH"')
start_ms=$(date +%s%3N)
e2e_bg webhook-on "$WEBHOOK" --tls-cert-file="$W/tls.crt" --tls-private-key-file="$W/tls.key" \
  --bind-address=127.0.0.1 --port="$ON" --log-level=warn --cluster-facts=on --kubeconfig="$KUBECONFIG"
PID_ON=$E2E_LAST_PID
until [[ $(metric "$ON" gpuguard_cluster_facts_in_use 2>/dev/null) == 1 ]]; do
  (( $(date +%s%3N) - start_ms < 300000 )) || { echo "no sync in 300 s"; exit 1; }
  sleep 0.05
done
sync_ms=$(( $(date +%s%3N) - start_ms ))
sleep 2
lists1=$(apiserver_metric '^apiserver_request_total\\{.*verb="LIST"')
watches1=$(apiserver_metric '^apiserver_longrunning_requests\\{.*verb="WATCH"')
echo "time to first sync, $NODES nodes: $sync_ms ms (process start to gpuguard_cluster_facts_in_use 1)"
echo "fact records held: $(metric "$ON" 'gpuguard_cluster_facts_objects{resource="nodes"}') nodes"
echo "API server at the start: $((lists1 - lists0)) LIST requests, $((watches1 - watches0)) watches held (apiserver_request_total, apiserver_longrunning_requests)"
echo "memory after the sync: facts off VmRSS $(rss_kb "$PID_OFF" VmRSS) kB, facts on $(rss_kb "$PID_ON" VmRSS) kB (VmHWM $(rss_kb "$PID_ON" VmHWM) kB): the cache costs $(( $(rss_kb "$PID_ON" VmRSS) - $(rss_kb "$PID_OFF" VmRSS) )) kB"

# ---- /validate latency, facts off and on, alternated ------------------------------------------
python3 "$HERE/make_review_body.py" "$SAMPLE" "$W/body.json"
measure() {  # measure PORT -> "p50 p99" in ms
  GPUGUARD_LOAD_BODY="$W/body.json" wrk -t1 -c2 -d"${DURATION}s" --timeout 5s -s "$ROOT/test/load/admission.lua" \
    "https://127.0.0.1:$1" 2>/dev/null | sed -n 's/.*p50_ms=\([0-9.]*\) p99_ms=\([0-9.]*\).*/\1 \2/p'
}
off50=() off99=() on50=() on99=()
for ((r = 0; r < REPS; r++)); do
  read -r a b <<<"$(measure "$OFF")"; off50+=("$a"); off99+=("$b")
  read -r a b <<<"$(measure "$ON")"; on50+=("$a"); on99+=("$b")
  echo "# rep $((r + 1)): off p50 ${off50[-1]} p99 ${off99[-1]} ms; on p50 ${on50[-1]} p99 ${on99[-1]} ms"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m_off50=$(median "${off50[@]}") m_off99=$(median "${off99[@]}") m_on50=$(median "${on50[@]}") m_on99=$(median "${on99[@]}")
echo "/validate, $NODES nodes in the facts, medians of $REPS: facts off p50 $m_off50 ms p99 $m_off99 ms; facts on p50 $m_on50 ms p99 $m_on99 ms"
python3 -c "print('p99 ratio on/off: %.2f (target <= 1.1); p50 ratio %.2f' % ($m_on99 / $m_off99, $m_on50 / $m_off50))"
echo "memory after the load: facts on VmRSS $(rss_kb "$PID_ON" VmRSS) kB, VmHWM $(rss_kb "$PID_ON" VmHWM) kB"
echo "# uptime at the end: $(uptime)"
