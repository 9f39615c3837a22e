#!/usr/bin/env bash
# How close gpuguard-webhook is to the floor every webhook pays, and to a ValidatingAdmissionPolicy,
# measured create by create on one e2e control plane (test/e2e/lib.sh) where all arms are in effect
# at once, each in its own namespace (b-ARM, labelled gpuguard-bench=ARM):
#   none      no webhook, no policy
#   vap       the ValidatingAdmissionPolicy of test/bench/peers/policies (CEL in the API server),
#             bound to its namespace only
#   noop-h1   the no-op webhook (test/bench/peers/noop-webhook) offering HTTP/1.1 only, as
#             gpuguard-webhook does: the floor, like with like
#   noop      the same offering h2 by ALPN, as Go servers do (kube-apiserver then speaks HTTP/2)
#   gpuguard  gpuguard-webhook
# Every webhook is registered as admission_vs_peers.sh registers gpuguard (Fail, 10 s, same CA).
# Each round creates one valid GPU pod (dry run) per arm in a shuffled order on one keep-alive
# connection, so every arm meets the same moments of a noisy machine: what an arm adds is the
# median of its round-by-round differences with none (and, beside it, by p50 and p99). Unlike
# admission_vs_peers.sh's alternation of whole runs, this resolves tenths of a millisecond at load 5.
#
#   test/bench/admission_floor.sh [-n ROUNDS] [BUILD_DIR]
#     ROUNDS     rounds of one create per arm (default 1000), after 30 for warm-up
#     BUILD_DIR  where gpuguard-webhook was built (default build)
# The last line: "admission floor: gpuguard +G ms, noop-h1 +F ms, noop +H ms, vap +V ms (median paired,
# over none); gpuguard over the floor +M ms, over the vap +W ms".
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ROUNDS=1000
while getopts "n:h" o; do
  case $o in
    n) ROUNDS=$OPTARG ;;
    *) sed -n '2,22p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
WEBHOOK=${1:-$ROOT/build}/gpuguard-webhook
[ -x "$WEBHOOK" ] || { echo "admission_floor.sh: no $WEBHOOK (build it first)" >&2; exit 2; }
# The ports of admission_vs_peers.sh (never run both at once).
export E2E_ETCD_PORT=${E2E_ETCD_PORT:-23400} E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-23443}
WH_PORT=${BENCH_WEBHOOK_PORT:-23500} NOOP_PORT=${BENCH_NOOP_PORT:-23530}
# shellcheck source=../e2e/lib.sh
source "$ROOT/test/e2e/lib.sh"
tools=$(mktemp)
e2e_prepare_tools >"$tools" || { echo "admission_floor.sh: no control plane (test/e2e/build-controlplane.sh)"; exit 1; }
sed 's/^/# /' "$tools"; rm -f "$tools"
e2e_init
NOOP=$("$HERE/peers/build-peers.sh" --noop 2>"$E2E_WORK/build-noop.log") ||
  { tail -5 "$E2E_WORK/build-noop.log"; echo "admission_floor.sh: the no-op webhook did not build (Go in /usr/local/go)"; exit 1; }
e2e_start_cluster || { echo "admission_floor.sh: the e2e control plane did not start (see above)"; exit 1; }
source "$HERE/peers/bench_cluster.sh"
bench_gpu_nodes || { echo "admission_floor.sh: the GPU nodes were not created"; exit 1; }

WH=$E2E_WORK/webhook
mkdir -p "$WH"
e2e_make_ca "$WH" ca
e2e_make_cert "$WH" ca tls "/CN=127.0.0.1" serverAuth "IP:127.0.0.1"
CA_BUNDLE=$(base64 -w0 "$WH/ca.crt")
ARMS=(none vap noop-h1 noop gpuguard)
declare -A PORT=([gpuguard]=$WH_PORT [noop-h1]=$NOOP_PORT [noop]=$((NOOP_PORT + 1)))
start() {  # start NAME CMD... : in the background, until its /healthz answers
  local name=$1; shift
  e2e_bg "$name" "$@"
  e2e_wait_for "$name" 60 curl -sk --max-time 2 -o /dev/null "https://127.0.0.1:${PORT[$name]}/healthz" ||
    { tail -20 "$E2E_WORK/$name.log" >&2; return 1; }
}
start gpuguard "$WEBHOOK" --tls-cert-file="$WH/tls.crt" --tls-private-key-file="$WH/tls.key" \
  --bind-address=127.0.0.1 --port="$WH_PORT" --log-level=warn &&
  start noop-h1 "$NOOP" -addr "127.0.0.1:${PORT[noop-h1]}" -cert "$WH/tls.crt" -key "$WH/tls.key" -http1 &&
  start noop "$NOOP" -addr "127.0.0.1:${PORT[noop]}" -cert "$WH/tls.crt" -key "$WH/tls.key" ||
  { echo "admission_floor.sh: a webhook did not start (logs in $E2E_WORK)"; exit 1; }

# The VAP of admission_vs_peers.sh, its binding limited to b-vap.
sed '/^---$/,$d' "$HERE/peers/policies/vap-gpu-seed-rules.yaml" >"$E2E_WORK/vap.yaml"
cat >>"$E2E_WORK/vap.yaml" <<'EOF'
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: gpu-seed-rules}
spec:
  policyName: gpu-seed-rules
  validationActions: [Deny]
  matchResources: {namespaceSelector: {matchLabels: {gpuguard-bench: vap}}}
EOF
for arm in "${ARMS[@]}"; do
  e2e_ns "b-$arm" >/dev/null && e2e_kubectl label namespace "b-$arm" "gpuguard-bench=$arm" --overwrite >/dev/null ||
    { echo "admission_floor.sh: namespace b-$arm not created"; exit 1; }
  [[ -n ${PORT[$arm]:-} ]] || continue
  bench_url_webhook "bench-$arm" "https://127.0.0.1:${PORT[$arm]}/validate" Fail 10 "$arm" | e2e_kubectl apply -f - >/dev/null ||
    { echo "admission_floor.sh: webhook bench-$arm not registered"; exit 1; }
done
e2e_kubectl apply -f "$E2E_WORK/vap.yaml" >/dev/null || { echo "admission_floor.sh: the VAP did not apply"; exit 1; }

# In effect: a GPU pod without the toleration is denied in b-vap and b-gpuguard, and both no-ops
# have seen a review.
NOTOL='{"spec":{"containers":[{"name":"notol","image":"cuda","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}'
denied_in() { ! e2e_kubectl run notol -n "$1" --dry-run=server --image=cuda --overrides="$NOTOL" >/dev/null 2>&1; }
admitted_in() { e2e_kubectl run probe -n "$1" --dry-run=server --image=cuda >/dev/null 2>&1; }
noop_seen() { curl -sk --max-time 2 "https://127.0.0.1:${PORT[$1]}/stats" | awk '/_requests/ { n += $2 } END { exit !(n > 0) }'; }
in_effect() {
  denied_in b-vap && denied_in b-gpuguard && admitted_in b-noop && admitted_in b-noop-h1 &&
    noop_seen noop && noop_seen noop-h1
}
e2e_wait_for "every arm in effect" 120 in_effect || { echo "admission_floor.sh: the arms did not take effect"; exit 1; }

# counters ARM : "connections reviews handler_seconds h2_reviews" as the webhook counts them
# (gpuguard's /metrics, the no-op's /stats); a scrape is one connection more.
counters() {
  if [[ $1 == gpuguard ]]; then
    curl -sk --max-time 5 "https://127.0.0.1:$WH_PORT/metrics" | awk '
      $1 == "gpuguard_https_connections_accepted_total" { c = $2 } $1 == "gpuguard_admission_duration_seconds_count" { n = $2 }
      $1 == "gpuguard_admission_duration_seconds_sum" { t = $2 } END { print c + 0, n + 0, t + 0, 0 }'
  else
    curl -sk --max-time 5 "https://127.0.0.1:${PORT[$1]}/stats" | awk '
      { v[$1] = $2 } END { print v["connections_accepted"] + 0, v["http1_requests"] + v["http2_requests"], v["handler_seconds"] + 0, v["http2_requests"] + 0 }'
  fi
}
server_line() {  # server_line ARM BEFORE AFTER : what the webhook saw during the creates
  local open
  open=$(ss -Htn state established "( sport = :${PORT[$1]} )" | wc -l)
  awk -v a="$1" -v b="$2" -v e="$3" -v o="$open" 'BEGIN {
    split(b, x, " "); split(e, y, " "); n = y[2] - x[2]; ms = n > 0 ? (y[3] - x[3]) * 1e3 / n : 0
    printf "server %s: %d reviews (%d over HTTP/2) on %d new connection(s), %d open from the API server; %.3f ms per review in its handler\n",
      a, n, y[4] - x[4], y[1] - x[1] - 1, o, ms }'
}

echo "# admission_floor: $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $ROUNDS rounds of one dry-run pod create per arm, shuffled; arms: ${ARMS[*]}"
declare -A BEFORE
for arm in gpuguard noop-h1 noop; do BEFORE[$arm]=$(counters "$arm"); done
out=$(python3 "$HERE/peers/paired_creates.py" "$E2E_APISERVER_PORT" "$E2E_WORK/pki" "$ROUNDS" "${ARMS[@]}") ||
  { echo "$out"; echo "admission_floor.sh: the creates failed"; exit 1; }
grep -v '^added \|^over ' <<<"$out"
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
for arm in gpuguard noop-h1 noop; do server_line "$arm" "${BEFORE[$arm]}" "$(counters "$arm")"; done
awk '$1 == "added" { printf "added %-8s %+.3f ms median paired, %+.3f ms p50, %+.3f ms p99\n", $2, $3, $4, $5 }
     $1 == "over" { printf "gpuguard over %s: %+.3f ms median paired\n", $2, $3 }' <<<"$out"
awk '$1 == "added" { a[$2] = $3 } $1 == "over" { o[$2] = $3 } END {
  printf "admission floor: gpuguard %+.3f ms, noop-h1 %+.3f ms, noop %+.3f ms, vap %+.3f ms (median paired, over none); gpuguard over the floor %+.3f ms, over the vap %+.3f ms\n",
    a["gpuguard"], a["noop-h1"], a["noop"], a["vap"], o["noop-h1"], o["vap"] }' <<<"$out"
