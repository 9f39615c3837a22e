#!/usr/bin/env bash
# What the background audit costs admission (issue 27, "Done when": p99 with the audit on within
# 1.1x of off), in one run against the e2e control plane (test/e2e/lib.sh: etcd + kube-apiserver
# on 127.0.0.1) with OpenReports' CRDs. On demand, not CI.
#
#   test/bench/audit_bench.sh [-d SECONDS] [-r REPS] [-w WORKLOADS] [-p] [-a FLAGS] [-P] [BUILD_DIR]
#     -d SECONDS    each wrk measurement, from the webhook's start (default 30): the "on" arm
#                   covers the audit's start and the first part of its first full scan (judged
#                   at --audit-judge-qps 50: the default 4,500 objects take ~90 s; the reports
#                   are written when it completes, so with the default none within 30 s)
#     -r REPS       audit off / audit on alternated REPS times, a fresh webhook each (default 3)
#     -w WORKLOADS  Deployments (default 2000), as many bare Pods and a quarter as many Jobs,
#                   over 20 namespaces; a third of them with findings (a GPU without the GPU
#                   toleration and driver pin), the rest clean
#     -p            pin the webhook to CPU 0 and everything else to CPU 1 (the in-process cost)
#     -a FLAGS      more webhook flags for the "on" arm (e.g. "--audit-pending-bytes=4Mi")
#     -P            profile: `perf record -g` of each webhook during its wrk run, and glibc's
#                   malloc_stats (gdb) at its end, into the work directory (printed)
#
# Both arms: cluster facts on (100 GPU nodes), and a churn loop patching 10 Deployments a
# second (the same API server load). Prints the uptime load at the start; per rep /validate p50
# and p99 (wrk, 2 connections, the ~5 KB GPU Pod AdmissionReview of load_vs_nginx.sh); the
# medians and p99(on)/p99(off); for the "on" runs the first full scan's duration, reports
# written, judge CPU seconds, VmRSS/VmHWM against the "off" webhook, and the API server
# requests each arm caused (apiserver_request_total).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=30 REPS=3 WORKLOADS=2000 PIN=0 EXTRA="" PROFILE=0
while getopts "d:r:w:pa:Ph" o; do
  case $o in
    d) DURATION=$OPTARG ;; r) REPS=$OPTARG ;; w) WORKLOADS=$OPTARG ;; p) PIN=1 ;;
    a) EXTRA=$OPTARG ;; P) PROFILE=1 ;;
    *) sed -n '2,25p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
BUILD_DIR=${1:-$ROOT/build}
[ -x "$BUILD_DIR/gpuguard-webhook" ] || { echo "audit_bench.sh: no gpuguard-webhook in $BUILD_DIR" >&2; exit 2; }
HELP=$("$BUILD_DIR/gpuguard-webhook" --help)
[[ $HELP == *--audit=* ]] || { echo "audit_bench.sh: this gpuguard-webhook has no --audit" >&2; exit 2; }
command -v wrk >/dev/null || { echo "audit_bench.sh: needs wrk (apt-get install wrk)" >&2; exit 2; }
SAMPLE=$(ls "$ROOT"/../shared/reference/admission-samples/raw/03-CREATE-Pod-*allowed.json 2>/dev/null | head -1)
[ -f "$SAMPLE" ] || { echo "audit_bench.sh: no admission sample (shared/reference/admission-samples)" >&2; exit 2; }
export E2E_ETCD_PORT=${E2E_ETCD_PORT:-23800} E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-23843}
# shellcheck source=../e2e/lib.sh
source "$ROOT/test/e2e/lib.sh"
echo "# uptime at the start: $(uptime)"
tools=$(mktemp)
e2e_prepare_tools >"$tools" || { echo "audit_bench.sh: no control plane"; exit 1; }
sed 's/^/# /' "$tools"; rm -f "$tools"
e2e_init
e2e_start_cluster || exit 1
W=$E2E_WORK/bench
mkdir -p "$W"
cp "$BUILD_DIR/gpuguard-webhook" "$W/gpuguard-webhook"  # a rebuild meanwhile changes nothing here
WEBHOOK=$W/gpuguard-webhook
on_cpu() { if ((PIN)); then echo taskset -c "$1"; fi; }  # a command prefix: taskset execs, the PID stays
if ((PIN)); then for pid in "${E2E_PIDS[@]}"; do taskset -apc 1 "$pid" >/dev/null; done; fi

# ---- the cluster: GPU nodes, OpenReports' CRDs, the workloads ----------------------------------
python3 "$HERE/gen_nodes.py" 100 "$W"
for f in "$W"/nodes-*.json; do e2e_kubectl create -f "$f" >/dev/null || { echo "creating nodes failed"; exit 1; }; done
e2e_kubectl taint nodes --all node.kubernetes.io/not-ready:NoSchedule- >/dev/null
for crd in "$ROOT"/manifests/chart/gpuguard/files/crds/*.yaml; do e2e_kubectl apply -f "$crd" >/dev/null || exit 1; done
e2e_wait_for "the Report CRD" 60 e2e_kubectl get reports -A || exit 1
python3 - "$W" "$WORKLOADS" <<'PYEOF'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
def pod_spec(i):
    if i % 3:  # clean: no GPU
        return {"containers": [{"name": "app", "image": "registry.example/app:1.%d" % (i % 50),
                                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    return {"containers": [{"name": "train", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}  # no GPU toleration, no driver pin
def meta(kind, i):
    return {"name": "%s-%05d" % (kind, i), "namespace": "bench-%02d" % (i % 20), "labels": {"app": "%s-%d" % (kind, i)}}
items = {}
items["deployments"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("dep", i),
                         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "dep-%d" % i}},
                                  "template": {"metadata": {"labels": {"app": "dep-%d" % i}}, "spec": pod_spec(i)}}} for i in range(n)]
items["pods"] = [{"apiVersion": "v1", "kind": "Pod", "metadata": meta("pod", i), "spec": pod_spec(i)} for i in range(n)]
items["jobs"] = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("job", i),
                  "spec": {"template": {"spec": dict(pod_spec(i), restartPolicy="Never")}}} for i in range(n // 4)]
for kind, objs in items.items():
    for start in range(0, len(objs), 500):
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs[start:start + 500]},
                  open("%s/%s-%05d.json" % (out, kind, start), "w"))
PYEOF
t=$SECONDS
for k in $(seq -w 0 19); do e2e_ns "bench-$k" || { echo "creating namespace bench-$k failed"; exit 1; }; done  # with its ServiceAccount
for kind in deployments pods jobs; do
  for f in "$W/$kind"-*.json; do
    e2e_kubectl create -f "$f" >/dev/null 2>"$W/create.err" || { echo "creating $f failed: $(head -c 300 "$W/create.err")"; exit 1; }
  done
done
echo "# cluster: 100 GPU nodes, $WORKLOADS Deployments, $WORKLOADS Pods, $((WORKLOADS / 4)) Jobs in 20 namespaces ($((SECONDS - t)) s to create)"

# ---- the churn: 10 Deployment patches a second, both arms --------------------------------------
api() { curl -sS --cacert "$E2E_WORK/pki/ca.crt" --cert "$E2E_WORK/pki/admin.crt" --key "$E2E_WORK/pki/admin.key" "$@"; }
churn() {
  local i=0
  while :; do
    api -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
      -d "{\"metadata\":{\"annotations\":{\"bench/churn\":\"$i\"}}}" \
      "https://127.0.0.1:$E2E_APISERVER_PORT/apis/apps/v1/namespaces/bench-$(printf %02d $((i % 20)))/deployments/dep-$(printf %05d $((i * 7 % WORKLOADS)))"
    i=$((i + 1))
    sleep 0.1
  done
}
churn &
CHURN=$!
((PIN)) && taskset -pc 1 "$CHURN" >/dev/null
E2E_PIDS+=("$CHURN"); E2E_PID_NAMES+=(churn)

# ---- the arms ------------------------------------------------------------------------------------
e2e_make_ca "$W" ca
e2e_make_cert "$W" ca tls "/CN=127.0.0.1" serverAuth "IP:127.0.0.1"
python3 "$HERE/make_review_body.py" "$SAMPLE" "$W/body.json"
PORT=$(e2e_pick_port 23900 1)
requests_total() { api "https://127.0.0.1:$E2E_APISERVER_PORT/metrics" | awk '$1 ~ /^apiserver_request_total\{/ { n += $2 } END { printf "%d", n }'; }
metric() { curl -sS --cacert "$W/ca.crt" "https://127.0.0.1:$PORT/metrics" | awk -v s="$1" '$1 == s || index($1, s "{") == 1 { n += $2 } END { print n + 0 }'; }
rss_kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }
ready() { curl -sf --cacert "$W/ca.crt" "https://127.0.0.1:$PORT/readyz" >/dev/null; }
election=()
if [[ $HELP == *--leader-elect* ]]; then
  election=(--leader-elect=true --leader-elect-resource-namespace=default)
fi
run() {  # run off|on -> prints "p50 p99 requests" and, for on, the audit's figures
  local arm=$1 before pid p50 p99
  [[ $arm == on ]] && e2e_kubectl delete reports --all -A >/dev/null 2>&1  # every on run writes them anew
  before=$(requests_total)
  local audit=(--audit=off)
  # shellcheck disable=SC2206  # EXTRA: flags split on spaces
  [[ $arm == on ]] && audit=(--audit=on --audit-resync-interval=1h "${election[@]}" $EXTRA)
  # shellcheck disable=SC2046  # on_cpu: "" or "taskset -c 0"
  POD_NAME=bench POD_NAMESPACE=default e2e_bg "webhook-$arm" $(on_cpu 0) "$WEBHOOK" --tls-cert-file="$W/tls.crt" \
    --tls-private-key-file="$W/tls.key" --bind-address=127.0.0.1 --port="$PORT" --log-level=warn \
    --cluster-facts=on --kubeconfig="$KUBECONFIG" "${audit[@]}"
  pid=$E2E_LAST_PID
  e2e_wait_for "webhook ($arm) ready" 30 ready >/dev/null 2>&1 || { tail -n 5 "$E2E_WORK/webhook-$arm.log"; exit 1; }
  local perf=""
  if ((PROFILE)); then
    perf record -g -o "$W/perf-$arm-$r.data" -p "$pid" -- sleep "$DURATION" >/dev/null 2>&1 &
    perf=$!
  fi
  # shellcheck disable=SC2046
  read -r p50 p99 < <(GPUGUARD_LOAD_BODY="$W/body.json" $(on_cpu 1) wrk -t1 -c2 -d"${DURATION}s" --timeout 5s \
    -s "$ROOT/test/load/admission.lua" "https://127.0.0.1:$PORT" 2>/dev/null |
    sed -n 's/.*p50_ms=\([0-9.]*\) p99_ms=\([0-9.]*\).*/\1 \2/p')
  LAST="$p50 $p99 $(($(requests_total) - before))"
  if ((PROFILE)); then
    wait "$perf"
    gdb -p "$pid" -batch -ex 'call (void)malloc_stats()' >/dev/null 2>&1  # to the webhook's stderr
    cp "/proc/$pid/smaps_rollup" "$W/smaps-$arm-$r.txt"
    echo "# profile of rep $r ($arm): $W/perf-$arm-$r.data, malloc_stats in $E2E_WORK/webhook-$arm.log" >&2
  fi
  if [[ $arm == on ]]; then
    AUDIT="first full scan $(metric gpuguard_audit_last_full_scan_duration_seconds) s (0: not finished within ${DURATION} s),"
    AUDIT+=" reports written $(metric gpuguard_audit_report_writes_total), judge CPU $(metric gpuguard_audit_judge_seconds_total) s,"
    AUDIT+=" objects audited $(metric gpuguard_audit_objects), reports held $(e2e_kubectl get reports -A --no-headers 2>/dev/null | wc -l),"
    AUDIT+=" report API served $(metric gpuguard_audit_reports_api_served), VmRSS $(rss_kb "$pid" VmRSS) kB VmHWM $(rss_kb "$pid" VmHWM) kB"
    curl -sS --cacert "$W/ca.crt" "https://127.0.0.1:$PORT/metrics" | grep '^gpuguard_audit' >"$W/audit-metrics-$r.txt"
  else
    OFFMEM="VmRSS $(rss_kb "$pid" VmRSS) kB VmHWM $(rss_kb "$pid" VmHWM) kB"
  fi
  e2e_stop_pid "$pid"
  e2e_forget_pid "$pid"
}
off50=() off99=() on50=() on99=()
for ((r = 1; r <= REPS; r++)); do
  run off; read -r a b q <<<"$LAST"; off50+=("$a"); off99+=("$b")
  echo "# rep $r: audit off p50 $a p99 $b ms, $q API requests; webhook $OFFMEM"
  run on; read -r a b q <<<"$LAST"; on50+=("$a"); on99+=("$b")
  echo "# rep $r: audit on  p50 $a p99 $b ms, $q API requests; $AUDIT"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m_off50=$(median "${off50[@]}") m_off99=$(median "${off99[@]}") m_on50=$(median "${on50[@]}") m_on99=$(median "${on99[@]}")
echo "/validate during the first ${DURATION} s of a webhook, medians of $REPS (pinned: $PIN):" \
  "audit off p50 $m_off50 ms p99 $m_off99 ms; audit on p50 $m_on50 ms p99 $m_on99 ms"
python3 -c "print('p99 ratio on/off: %.2f (target <= 1.10); p50 ratio %.2f' % ($m_on99 / $m_off99, $m_on50 / $m_off50))"
echo "# uptime at the end: $(uptime)"
