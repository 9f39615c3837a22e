# Sourced by test/bench/admission_vs_peers.sh once the control plane runs (E2E_WORK, KUBECONFIG,
# e2e_* from test/e2e/lib.sh; N, REPS, PEERS, WEBHOOK, WH_PORT, HERE set): brings up each
# configuration in turn, measures it, asks it the mistakes, tears it down, and prints the tables.
POLICIES=$HERE/peers/policies
PYTHON=$(e2e_python) || { echo "admission_vs_peers.sh: no python3 with PyYAML"; exit 1; }
MISTAKES=$HERE/peers/mistakes.yaml
KYVERNO_PORT=${BENCH_KYVERNO_PORT:-23510}
GATEKEEPER_PORT=${BENCH_GATEKEEPER_PORT:-23520}
NOOP_PORT=${BENCH_NOOP_PORT:-23530}
# The floor: the smallest correct webhook, registered as gpuguard is; "noop" offers h2 and
# http/1.1 by ALPN (Go's default), "noop-h1" HTTP/1.1 only, as gpuguard-webhook does.
NOOP=$("$HERE/peers/build-peers.sh" --noop 2>"$E2E_WORK/build-noop.log") ||
  { tail -5 "$E2E_WORK/build-noop.log"; echo "admission_vs_peers.sh: the no-op webhook did not build (Go in /usr/local/go)"; exit 1; }
CONFIGS=(none vap noop noop-h1 gpuguard)

e2e_kubectl apply -f "$ROOT/test/e2e/crds/crds.yaml" >/dev/null &&
  e2e_kubectl wait --for=condition=established --timeout=60s crd/rayclusters.ray.io crd/pytorchjobs.kubeflow.org >/dev/null ||
  { echo "admission_vs_peers.sh: the custom resources of the mistakes did not install"; exit 1; }

source "$HERE/peers/bench_cluster.sh"
bench_gpu_nodes || { echo "admission_vs_peers.sh: the GPU nodes were not created"; exit 1; }

if ((PEERS)); then
  peers=$("$HERE/peers/build-peers.sh" 2>"$E2E_WORK/build-peers.log") ||
    { tail -5 "$E2E_WORK/build-peers.log"; echo "admission_vs_peers.sh: peers not built (-P runs without them)"; exit 1; }
  KYVERNO=$(ls "$peers"/kyverno-*/bin/kyverno-admission) GATEKEEPER=$(ls "$peers"/gatekeeper-*/bin/gatekeeper-manager)
  KYVERNO_MODULE=$("$HERE/peers/build-peers.sh" --module-dir kyverno) &&
    GATEKEEPER_MODULE=$("$HERE/peers/build-peers.sh" --module-dir gatekeeper) ||
    { echo "admission_vs_peers.sh: the peers' module sources are not in the Go module cache"; exit 1; }
  CONFIGS=(none vap kyverno gatekeeper noop noop-h1 gpuguard)
fi

# --- one-time installs: what each tool's install manifest creates, without the Deployments
# (nothing runs them here: the processes run on this machine) and, for Gatekeeper, without its
# webhook configurations, which name a Service; ours name the process by URL.
without_kinds() {  # without_kinds FILE KIND... : the multi-document YAML FILE without those kinds
  "$PYTHON" - "$@" <<'PY'
import sys, yaml
drop = set(sys.argv[2:])
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") not in drop]
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
PY
}
install_peer_manifests() {
  without_kinds "$KYVERNO_MODULE/config/install-latest-testing.yaml" Deployment >"$E2E_WORK/kyverno-install.yaml"
  e2e_kubectl apply --server-side --force-conflicts -f "$E2E_WORK/kyverno-install.yaml" >"$E2E_WORK/kyverno-install.log" 2>&1 ||
    { tail -5 "$E2E_WORK/kyverno-install.log"; return 1; }
  without_kinds "$GATEKEEPER_MODULE/deploy/gatekeeper.yaml" Deployment ValidatingWebhookConfiguration \
    MutatingWebhookConfiguration >"$E2E_WORK/gatekeeper-install.yaml"
  e2e_kubectl apply --server-side --force-conflicts -f "$E2E_WORK/gatekeeper-install.yaml" >"$E2E_WORK/gatekeeper-install.log" 2>&1 ||
    { tail -5 "$E2E_WORK/gatekeeper-install.log"; return 1; }
  # Gatekeeper owns its status objects by its own Pod (POD_NAME): a Pod of that name must exist
  # (and its namespace the default ServiceAccount that no controller-manager creates here).
  e2e_ns_prepare gatekeeper-system || return 1
  cat >"$E2E_WORK/gatekeeper-pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: gatekeeper-bench, namespace: gatekeeper-system}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: manager
    image: openpolicyagent/gatekeeper:v3.23.1
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
  e2e_kubectl apply -f "$E2E_WORK/gatekeeper-pod.yaml" >>"$E2E_WORK/gatekeeper-install.log" 2>&1 ||
    { tail -5 "$E2E_WORK/gatekeeper-install.log"; return 1; }
}
if [[ -n $ONLY ]]; then
  read -ra CONFIGS <<<"none ${ONLY//none/}"
  [[ " ${CONFIGS[*]} " == *" kyverno "* || " ${CONFIGS[*]} " == *" gatekeeper "* ]] || PEERS=0
fi
((PEERS)) && { install_peer_manifests || { echo "admission_vs_peers.sh: peer manifests did not apply"; exit 1; }; }

# --- gpuguard-webhook with a CA of its own (also the CA of Gatekeeper's serving certificate)
WH=$E2E_WORK/webhook
mkdir -p "$WH" "$WH/gatekeeper"
e2e_make_ca "$WH" ca
e2e_make_cert "$WH" ca tls "/CN=127.0.0.1" serverAuth "IP:127.0.0.1"
e2e_make_cert "$WH" ca gatekeeper "/CN=127.0.0.1" serverAuth "IP:127.0.0.1"
mv "$WH/gatekeeper.crt" "$WH/gatekeeper/tls.crt" && mv "$WH/gatekeeper.key" "$WH/gatekeeper/tls.key" &&
  cp "$WH/ca.crt" "$WH/gatekeeper/ca.crt"
CA_BUNDLE=$(base64 -w0 "$WH/ca.crt")
bench_url_webhook bench-gpuguard "https://127.0.0.1:$WH_PORT/validate" Fail 10 >"$E2E_WORK/gpuguard-vwc.yaml"
bench_url_webhook bench-noop "https://127.0.0.1:$NOOP_PORT/validate" Fail 10 >"$E2E_WORK/noop-vwc.yaml"
# Gatekeeper's shipped configuration: failurePolicy Ignore, timeoutSeconds 3, path /v1/admit
bench_url_webhook gatekeeper-validating-webhook-configuration "https://127.0.0.1:$GATEKEEPER_PORT/v1/admit" Ignore 3 \
  >"$E2E_WORK/gatekeeper-vwc.yaml"

# --- bring a configuration up and down
PID_CFG=""
start_process() {  # start_process NAME HEALTH_URL CMD...
  local name=$1 health=$2; shift 2
  e2e_bg "$name" "$@"
  PID_CFG=$E2E_LAST_PID
  e2e_wait_for "$name" 120 curl -sk --max-time 2 -o /dev/null "$health" || { tail -20 "$E2E_WORK/$name.log" >&2; return 1; }
}
stop_process() {
  [[ -n $PID_CFG ]] || return 0
  e2e_stop_pid "$PID_CFG"; e2e_forget_pid "$PID_CFG"; PID_CFG=""
}
dry_run_status() {  # dry_run_status FILE : HTTP status and message of a dry-run create in bench
  e2e_kubectl create --dry-run=server -n bench -f "$1" 2>&1
}
"$PYTHON" - "$MISTAKES" "$E2E_WORK/notol-pod.json" <<'PY'
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["metadata"]["name"] == "notol-pod":
        json.dump(d, open(sys.argv[2], "w"))
PY
probe_denied() { ! dry_run_status "$E2E_WORK/notol-pod.json" >/dev/null; }
probe_admitted() { dry_run_status "$E2E_WORK/notol-pod.json" >/dev/null; }
# The no-op admits everything: it is in effect once a create reaches it.
noop_requests() { curl -sk --max-time 2 "https://127.0.0.1:$NOOP_PORT/stats" | awk '/_requests/ { n += $2 } END { print n + 0 }'; }
probe_noop_called() {
  local before; before=$(noop_requests)
  probe_admitted && (($(noop_requests) > before))
}

configure() {  # configure CONFIG : up, and in effect (the GPU pod without toleration denied)
  case $1 in
    none) e2e_wait_for "no admission policy in effect" 30 probe_admitted; return ;;
    vap) e2e_kubectl apply -f "$POLICIES/vap-gpu-seed-rules.yaml" >/dev/null || return 1 ;;
    gpuguard)
      start_process gpuguard "https://127.0.0.1:$WH_PORT/healthz" "$WEBHOOK" --tls-cert-file="$WH/tls.crt" \
        --tls-private-key-file="$WH/tls.key" --bind-address=127.0.0.1 --port="$WH_PORT" --log-level=warn || return 1
      e2e_kubectl apply -f "$E2E_WORK/gpuguard-vwc.yaml" >/dev/null || return 1 ;;
    noop | noop-h1)
      local h1=(); [[ $1 == noop-h1 ]] && h1=(-http1)
      start_process "$1" "https://127.0.0.1:$NOOP_PORT/healthz" "$NOOP" -addr "127.0.0.1:$NOOP_PORT" \
        -cert "$WH/tls.crt" -key "$WH/tls.key" "${h1[@]}" || return 1
      e2e_kubectl apply -f "$E2E_WORK/noop-vwc.yaml" >/dev/null || return 1
      e2e_wait_for "$1 in effect" 120 probe_noop_called
      return ;;
    kyverno)
      start_process kyverno "https://127.0.0.1:$KYVERNO_PORT/health/liveness" env KYVERNO_NAMESPACE=kyverno \
        KYVERNO_SERVICEACCOUNT_NAME=kyverno-admission-controller KYVERNO_DEPLOYMENT=kyverno-admission-controller \
        KYVERNO_POD_NAME=kyverno-bench INIT_CONFIG=kyverno METRICS_CONFIG=kyverno-metrics KYVERNO_SVC=kyverno-svc \
        "$KYVERNO" --kubeconfig="$KUBECONFIG" --serverIP="127.0.0.1:$KYVERNO_PORT" --webhookServerPort="$KYVERNO_PORT" \
        --webhookServerHost=127.0.0.1 --caSecretName=kyverno-svc.kyverno.svc.kyverno-tls-ca \
        --tlsSecretName=kyverno-svc.kyverno.svc.kyverno-tls-pair \
        --backgroundServiceAccountName=system:serviceaccount:kyverno:kyverno-background-controller \
        --reportsServiceAccountName=system:serviceaccount:kyverno:kyverno-reports-controller || return 1
      e2e_kubectl apply -f "$POLICIES/kyverno-gpu-seed-rules.yaml" >/dev/null || return 1 ;;
    gatekeeper)
      start_process gatekeeper "http://127.0.0.1:$((GATEKEEPER_PORT + 1))/healthz" env POD_NAMESPACE=gatekeeper-system \
        POD_NAME=gatekeeper-bench "$GATEKEEPER" --kubeconfig="$KUBECONFIG" --port="$GATEKEEPER_PORT" --host=127.0.0.1 \
        --cert-dir="$WH/gatekeeper" --disable-cert-rotation --operation=webhook --operation=generate \
        --exempt-namespace=gatekeeper-system '--disable-opa-builtin={http.send}' \
        --health-addr="127.0.0.1:$((GATEKEEPER_PORT + 1))" --metrics-addr=0 --log-level=WARNING || return 1
      e2e_kubectl apply -f "$E2E_WORK/gatekeeper-vwc.yaml" >/dev/null || return 1
      sed '/^---$/,$d' "$POLICIES/gatekeeper-gpu-seed-rules.yaml" >"$E2E_WORK/gatekeeper-template.yaml"
      e2e_kubectl apply -f "$E2E_WORK/gatekeeper-template.yaml" >/dev/null || return 1
      sed '1,/^---$/d' "$POLICIES/gatekeeper-gpu-seed-rules.yaml" >"$E2E_WORK/gatekeeper-constraint.yaml"
      e2e_wait_for "the K8sGpuSeedRules constraint kind" 120 \
        e2e_kubectl apply -f "$E2E_WORK/gatekeeper-constraint.yaml" ||
        { e2e_kubectl apply -f "$E2E_WORK/gatekeeper-constraint.yaml"; e2e_kubectl get crd -o name; return 1; } ;;
  esac
  e2e_wait_for "$1 in effect" 120 probe_denied
}
unconfigure() {  # unconfigure CONFIG : policy, webhook configurations and process gone
  case $1 in
    vap) e2e_kubectl delete -f "$POLICIES/vap-gpu-seed-rules.yaml" --ignore-not-found >/dev/null ;;
    gpuguard) e2e_kubectl delete -f "$E2E_WORK/gpuguard-vwc.yaml" --ignore-not-found >/dev/null ;;
    noop | noop-h1) e2e_kubectl delete -f "$E2E_WORK/noop-vwc.yaml" --ignore-not-found >/dev/null ;;
    kyverno)
      e2e_kubectl delete -f "$POLICIES/kyverno-gpu-seed-rules.yaml" --ignore-not-found >/dev/null
      stop_process
      e2e_kubectl delete validatingwebhookconfiguration,mutatingwebhookconfiguration \
        -l webhook.kyverno.io/managed-by=kyverno --ignore-not-found >/dev/null ;;
    gatekeeper)
      e2e_kubectl delete -f "$E2E_WORK/gatekeeper-vwc.yaml" --ignore-not-found >/dev/null
      e2e_kubectl delete -f "$POLICIES/gatekeeper-gpu-seed-rules.yaml" --ignore-not-found >/dev/null ;;
  esac
  stop_process
}

# measure CONFIG : N sequential dry-run creates of a valid GPU pod; one line "p50 p99 mean" in ms
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

# server_counters CONFIG : "connections reviews handler_seconds h2_reviews" as the webhook counts them
# (gpuguard's /metrics, the no-op's /stats); nothing for the others. A scrape is one connection more.
server_counters() {
  case $1 in
    gpuguard) curl -sk --max-time 5 "https://127.0.0.1:$WH_PORT/metrics" | awk '
      $1 == "gpuguard_https_connections_accepted_total" { c = $2 }
      $1 == "gpuguard_admission_duration_seconds_count" { n = $2 }
      $1 == "gpuguard_admission_duration_seconds_sum" { t = $2 }
      END { print c + 0, n + 0, t + 0, 0 }' ;;
    noop | noop-h1) curl -sk --max-time 5 "https://127.0.0.1:$NOOP_PORT/stats" | awk '
      { v[$1] = $2 } END { print v["connections_accepted"] + 0, v["http1_requests"] + v["http2_requests"],
                               v["handler_seconds"] + 0, v["http2_requests"] + 0 }' ;;
  esac
}
port_of() { case $1 in gpuguard) echo "$WH_PORT" ;; noop | noop-h1) echo "$NOOP_PORT" ;; esac; }
established_to() {  # established_to CONFIG : connections open to the webhook (the API server's)
  local port; port=$(port_of "$1")
  [[ -n $port ]] && ss -Htn state established "( sport = :$port )" | wc -l
}
# server_report CONFIG BEFORE AFTER OPEN : what the webhook saw during one measurement, one "#" line,
# and "connections reviews handler_ms_per_review" appended to $E2E_WORK/srv.CONFIG
server_report() {
  local cfg=$1 open=$4
  [[ -n $2 && -n $3 ]] || return 0
  awk -v cfg="$cfg" -v open="$open" -v b="$2" -v a="$3" -v out="$E2E_WORK/srv.$cfg" 'BEGIN {
    split(b, x, " "); split(a, y, " ")
    conns = y[1] - x[1] - 1; n = y[2] - x[2]; ms = n > 0 ? (y[3] - x[3]) * 1e3 / n : 0; h2 = y[4] - x[4]
    printf "#   %s saw %d reviews (%d over HTTP/2) on %d new connection(s), %d open from the API server; %.3f ms per review in its handler\n",
      cfg, n, h2, conns, open, ms
    printf "%d %d %.4f\n", conns, n, ms >> out }'
}

# verdicts CONFIG : each mistake as a dry-run create; "name verdict" lines into $E2E_WORK/verdict.CONFIG
verdicts() {
  "$PYTHON" - "$E2E_APISERVER_PORT" "$E2E_WORK/pki" "$MISTAKES" >"$E2E_WORK/verdict.$1" <<'PY'
import http.client, json, ssl, sys, yaml
port, pki, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
ctx.load_cert_chain(f"{pki}/admin.crt", f"{pki}/admin.key")
conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
plural = {"Pod": "pods", "Deployment": "deployments", "Job": "jobs", "RayCluster": "rayclusters", "PyTorchJob": "pytorchjobs"}
for d in yaml.safe_load_all(open(path)):
    if not d: continue
    api = d["apiVersion"]
    base = "/api/v1" if api == "v1" else f"/apis/{api}"
    conn.request("POST", f"{base}/namespaces/bench/{plural[d['kind']]}?dryRun=All", json.dumps(d).encode(),
                 {"Content-Type": "application/json"})
    r = conn.getresponse(); body = r.read().decode(errors="replace")
    if r.status == 201:
        verdict = "warn" if r.getheader("Warning") else "-"
    elif "admission webhook" in body or "ValidatingAdmissionPolicy" in body:
        verdict = "DENY"
    elif r.status == 422:
        verdict = "api"
    else:
        verdict = f"http{r.status}"
    print(d["metadata"]["name"], verdict)
PY
}

echo "# admission_vs_peers: $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# kube-apiserver $major.$minor, $N dry-run pod creates per run, medians of $REPS; configurations: ${CONFIGS[*]}"
for rep in $(seq 1 "$REPS"); do
  for cfg in "${CONFIGS[@]}"; do
    configure "$cfg" || { echo "admission_vs_peers.sh: $cfg did not come up (logs in $E2E_WORK)"; E2E_KEEP=1; exit 1; }
    before=$(server_counters "$cfg")
    line=$(measure "$cfg") || { echo "admission_vs_peers.sh: $line" >&2; unconfigure "$cfg"; exit 1; }
    after=$(server_counters "$cfg") open=$(established_to "$cfg")
    ((rep == 1)) && verdicts "$cfg"
    unconfigure "$cfg"
    echo "$line" >>"$E2E_WORK/res.$cfg"
    read -r p50 p99 mean <<<"$line"
    printf '%-10s p50 %7.3f ms  p99 %7.3f ms  mean %7.3f ms\n' "$cfg" "$p50" "$p99" "$mean"
    server_report "$cfg" "$before" "$after" "$open"
  done
done

echo
echo "# which GPU mistakes each configuration catches (DENY, warn; api: the API server refuses it itself; -: admitted)"
"$PYTHON" - "$MISTAKES" "$E2E_WORK" "${CONFIGS[@]}" <<'PY'
import sys, yaml
path, work, configs = sys.argv[1], sys.argv[2], sys.argv[3:]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
v = {c: dict(l.split() for l in open(f"{work}/verdict.{c}")) for c in configs}
print("| object | mistake | gpuguard rule | " + " | ".join(configs) + " |")
print("|---|---|---|" + "---|" * len(configs))
for d in docs:
    n, a = d["metadata"]["name"], d["metadata"]["annotations"]
    print(f"| {d['kind']}/{n} | {a['bench.gpuguard.io/mistake']} | {a['bench.gpuguard.io/rule']} | " +
          " | ".join(v[c].get(n, "?") for c in configs) + " |")
mistakes = [d["metadata"]["name"] for d in docs if d["metadata"]["annotations"]["bench.gpuguard.io/rule"] != "-"]
good = [d["metadata"]["name"] for d in docs if d["metadata"]["annotations"]["bench.gpuguard.io/rule"] == "-"]
for c in configs:
    caught = sum(v[c].get(n) in ("DENY", "warn") for n in mistakes)
    api = sum(v[c].get(n) == "api" for n in mistakes)
    false = sum(v[c].get(n) != "-" for n in good)
    print(f"catches {c}: {caught} of {len(mistakes)} mistakes itself ({api} more refused by the API server), "
          f"{false} of {len(good)} correct objects refused or warned")
PY

echo
med() { cut -d' ' -f"$2" "$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
n99=$(med "$E2E_WORK/res.none" 2)
added() { awk -v q="$(med "$E2E_WORK/res.$1" 2)" -v n="$n99" 'BEGIN { printf "%.3f", q - n }'; }
added50() { awk -v q="$(med "$E2E_WORK/res.$1" 1)" -v n="$(med "$E2E_WORK/res.none" 1)" 'BEGIN { printf "%.3f", q - n }'; }
for cfg in "${CONFIGS[@]}"; do
  [[ $cfg == none ]] && continue
  printf 'admission %s: p50 %s ms, p99 %s ms (+%s ms p99 over none)\n' "$cfg" "$(med "$E2E_WORK/res.$cfg" 1)" \
    "$(med "$E2E_WORK/res.$cfg" 2)" "$(added "$cfg")"
done
# The floor: what the no-op webhook adds, over the protocol gpuguard speaks (HTTP/1.1: noop-h1),
# and gpuguard's margin over it, by p99 and by p50 (p99 of one run is noisy), beside the time its
# handler took per review (medians over the runs).
has() { [[ " ${CONFIGS[*]} " == *" $1 "* ]]; }
if has noop && has noop-h1 && has gpuguard; then
  for cfg in noop noop-h1 gpuguard; do
    [[ -s $E2E_WORK/srv.$cfg ]] && printf 'admission %s server: %s new connection(s) per run, %s ms per review in the handler\n' \
      "$cfg" "$(med "$E2E_WORK/srv.$cfg" 1)" "$(med "$E2E_WORK/srv.$cfg" 3)"
  done
  awk -v g="$(added gpuguard)" -v f="$(added noop-h1)" -v f2="$(added noop)" -v g50="$(added50 gpuguard)" \
    -v f50="$(added50 noop-h1)" -v f250="$(added50 noop)" 'BEGIN {
    printf "admission floor: noop-h1 (HTTP/1.1) +%.3f ms p99, +%.3f ms p50; noop (h2 offered) +%.3f ms p99, +%.3f ms p50\n", f, f50, f2, f250
    printf "admission floor: gpuguard over the HTTP/1.1 floor %+.3f ms p99, %+.3f ms p50 (gpuguard +%.3f ms p99, +%.3f ms p50)\n", g - f, g50 - f50, g, g50 }'
fi
if has kyverno && has gatekeeper; then
  floor=""; has noop-h1 && floor=$(printf ', noop +%s ms' "$(added noop-h1)")
  awk -v g="$(added gpuguard)" -v k="$(added kyverno)" -v q="$(added gatekeeper)" -v v="$(added vap)" -v floor="$floor" 'BEGIN {
    best = k < q ? k : q; r = best > 0 ? g / best : 0
    printf "admission peers: gpuguard/best-peer p99 ratio %.2f (gpuguard +%.3f ms, kyverno +%.3f ms, gatekeeper +%.3f ms, vap +%.3f ms%s)\n", r, g, k, q, v, floor }'
fi
