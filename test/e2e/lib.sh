# shellcheck shell=bash
# Helpers for gpuguard's end-to-end tests: a real etcd + kube-apiserver (+ kube-scheduler for
# the scheduler oracle) on 127.0.0.1 with a throw-away PKI, built from the Go modules pinned in
# controlplane/go.mod by build-controlplane.sh.  Source this file; it defines functions only.
#
#   e2e_init               make the work dir ($E2E_WORK), install the EXIT trap
#   e2e_prepare_tools      build/find the control plane, a current kubectl; print "control plane: ..."
#   e2e_start_cluster      PKI, etcd, kube-apiserver, kubeconfig, wait for /readyz
#   e2e_start_scheduler    kube-scheduler against it, wait for /readyz
#   e2e_bg NAME CMD...     start a background process, remember its PID, log to $E2E_WORK/NAME.log
#   e2e_stop_pid PID       TERM, wait (bounded), KILL
#   e2e_cleanup            stop everything e2e_bg started (newest first); called on EXIT
#   e2e_ns NAME            create a namespace usable for Pods (sa/default, cm/kube-root-ca.crt)
#   e2e_kubectl ARGS...    kubectl against the test cluster, bounded by a timeout
#
# Environment (all optional):
#   GPUGUARD_E2E_CACHE       build cache (default /var/cache/gpuguard-e2e)
#   E2E_CONTROLPLANE         a directory with kube-apiserver, kube-scheduler, etcd (default: built)
#   E2E_ETCD_PORT            default 20379 (peer port is +1)
#   E2E_APISERVER_PORT       default 20443
#   E2E_SCHEDULER_PORT       default 20259 (kube-scheduler's /healthz, /readyz)
#   E2E_FEATURE_GATES        extra --feature-gates for kube-apiserver and kube-scheduler
#   E2E_KEEP=1               keep the work dir (logs, certs) after the run
#
# Every wait is bounded; every process is stopped by its PID, never by name.

E2E_CACHE=${GPUGUARD_E2E_CACHE:-/var/cache/gpuguard-e2e}
E2E_ETCD_PORT=${E2E_ETCD_PORT:-20379}
E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-20443}
E2E_SCHEDULER_PORT=${E2E_SCHEDULER_PORT:-20259}
E2E_PIDS=()
E2E_PID_NAMES=()
# extra kube-apiserver flags (an array), e.g. --admission-control-config-file=...
[[ $(declare -p E2E_APISERVER_EXTRA_ARGS 2>/dev/null) == "declare -a"* ]] || E2E_APISERVER_EXTRA_ARGS=()

e2e_log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

e2e_init() {
    E2E_WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuguard-e2e.XXXXXX")
    export E2E_WORK
    export KUBECONFIG=$E2E_WORK/kubeconfig
    trap 'e2e_cleanup' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# e2e_bg NAME CMD... : start CMD in the background, stdout+stderr to $E2E_WORK/NAME.log
e2e_bg() {
    local name=$1; shift
    "$@" >"$E2E_WORK/$name.log" 2>&1 &
    local pid=$!
    E2E_PIDS+=("$pid")
    E2E_PID_NAMES+=("$name")
    E2E_LAST_PID=$pid
}

e2e_stop_pid() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do          # 10 s
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

e2e_cleanup() {
    local rc=$? i
    trap - EXIT
    for ((i = ${#E2E_PIDS[@]} - 1; i >= 0; i--)); do
        [[ -n ${E2E_PIDS[i]} ]] && e2e_stop_pid "${E2E_PIDS[i]}"
    done
    E2E_PIDS=()
    if [[ -n ${E2E_WORK:-} && -d $E2E_WORK ]]; then
        if [[ ${E2E_KEEP:-0} == 1 || $rc != 0 ]]; then
            e2e_log "logs and certs kept in $E2E_WORK"
        else
            rm -rf "$E2E_WORK"
        fi
    fi
    exit "$rc"
}

# forget a PID we stopped ourselves (so cleanup does not try again)
e2e_forget_pid() {
    local pid=$1 i
    for i in "${!E2E_PIDS[@]}"; do
        [[ ${E2E_PIDS[i]} == "$pid" ]] && E2E_PIDS[i]=""
    done
}

e2e_port_free() {
    # true if nothing listens on 127.0.0.1:$1
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# e2e_pick_port BASE COUNT : first of BASE, BASE+10, ... BASE+190 with COUNT free ports from it
e2e_pick_port() {
    local base=$1 count=$2 p i ok
    for ((p = base; p < base + 200; p += 10)); do
        ok=1
        for ((i = 0; i < count; i++)); do e2e_port_free $((p + i)) || ok=0; done
        if ((ok)); then echo "$p"; return 0; fi
    done
    e2e_log "no free port from $base to $((base + 199))"
    return 1
}

# e2e_wait_for DESC TIMEOUT_S CMD... : poll CMD every 0.25 s until it succeeds
e2e_wait_for() {
    local desc=$1 timeout=$2; shift 2
    local deadline=$((SECONDS + timeout))
    while ((SECONDS < deadline)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    e2e_log "timed out after ${timeout}s waiting for $desc"
    return 1
}

e2e_kubectl() {
    timeout 60 kubectl --request-timeout=30s "$@"
}

# e2e_token_kubeconfig SERVICEACCOUNT NAMESPACE > kubeconfig : a kubeconfig that talks to the
# e2e API server as that ServiceAccount (a 2 h token), to test what its RBAC allows.
e2e_token_kubeconfig() {
    local token
    token=$(e2e_kubectl create token "$1" -n "$2" --duration=2h) || return 1
    cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:$E2E_APISERVER_PORT", certificate-authority: "$E2E_WORK/pki/ca.crt"}
users:
- name: sa
  user: {token: "$token"}
contexts:
- name: sa
  context: {cluster: e2e, user: sa}
current-context: sa
EOF
}

# e2e_add_gpu_node NAME DRIVER_MAJOR [EXTRA_LABELS] : creates a Ready 8-GPU H100 node as GPU Feature
# Discovery labels it (EXTRA_LABELS: more `,"key":"value"` pairs), tainted nvidia.com/gpu as the GPU
# Operator leaves it. The API server's TaintNodesByCondition taints a new node
# node.kubernetes.io/not-ready until the node lifecycle controller (not run here) sees it Ready: no
# pod could reach it (which cluster facts would then say, rightly), so the taint goes as the
# controller would remove it.
e2e_add_gpu_node() {
    e2e_kubectl create -f - >/dev/null <<EOF || return 1
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$1","labels":{"kubernetes.io/hostname":"$1",
 "nvidia.com/gpu.present":"true","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"${3:-},
 "nvidia.com/cuda.driver.major":"$2","nvidia.com/cuda.driver.minor":"54","nvidia.com/cuda.driver.rev":"15"}},
 "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
 "status":{"capacity":{"cpu":"96","memory":"1Ti","pods":"110","nvidia.com/gpu":"8"},
           "allocatable":{"cpu":"96","memory":"1Ti","pods":"110","nvidia.com/gpu":"8"},
           "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status"}]}}
EOF
    e2e_kubectl taint node "$1" node.kubernetes.io/not-ready:NoSchedule- >/dev/null
}

# e2e_prepare_tools : the control plane (built once into $E2E_CACHE), a current kubectl
# (test/tools/install-kubectl-helm.sh), openssl and curl. Prints the "control plane:" line.
e2e_prepare_tools() {
    local here missing=() dir
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    command -v openssl >/dev/null || missing+=(openssl)
    command -v curl >/dev/null || missing+=(curl)
    command -v unzip >/dev/null || missing+=(unzip)
    if ((${#missing[@]})); then
        e2e_log "installing ${missing[*]}"
        timeout 600 apt-get update -q >&2 || true
        DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
    fi
    if [[ -n ${E2E_CONTROLPLANE:-} ]]; then
        dir=$E2E_CONTROLPLANE
    else
        dir=$(bash "$here/build-controlplane.sh") || { e2e_log "building the control plane failed"; return 1; }
    fi
    KUBE_APISERVER=$dir/kube-apiserver KUBE_SCHEDULER=$dir/kube-scheduler ETCD=$dir/etcd
    local b
    for b in "$KUBE_APISERVER" "$KUBE_SCHEDULER" "$ETCD"; do
        [[ -x $b ]] || { e2e_log "missing $b"; return 1; }
    done
    # kubectl as a user runs it: a current release (1.35), not Debian's 1.20
    local tools
    if tools=$(bash "$here/../tools/install-kubectl-helm.sh"); then
        eval "$tools"
    else
        e2e_log "warning: could not install kubectl 1.35; using $(command -v kubectl || echo none)"
    fi
    command -v kubectl >/dev/null || { e2e_log "no kubectl"; return 1; }
    E2E_VERSIONS="kube-apiserver $("$KUBE_APISERVER" --version | awk '{print $2}'), kube-scheduler $("$KUBE_SCHEDULER" --version | awk '{print $2}'), etcd v$("$ETCD" --version | sed -n 's/^etcd Version: //p')"
    export E2E_VERSIONS
    echo "control plane: $E2E_VERSIONS"
    echo "kubectl: $(kubectl version --client 2>/dev/null | sed -n 's/^Client Version: //p')"
}

# e2e_oracle_setup NAME [scheduler] : what the stand-alone oracle scripts share. Resolves
# GPUGUARD_LINT (default <repo>/build/gpuguard-lint) into LINT, builds or finds the control
# plane, starts etcd + kube-apiserver (and kube-scheduler when asked). On failure prints the
# suite's FAIL line and "0 passed, 1 failed" and returns 1, so the caller exits 1.
e2e_oracle_setup() {
    local name=$1 scheduler=${2:-} root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    LINT=${GPUGUARD_LINT:-$root/build/gpuguard-lint}
    [[ $LINT == /* ]] || LINT=$root/$LINT
    local why=""
    if [[ ! -x $LINT ]]; then why="no gpuguard-lint at $LINT"
    elif ! e2e_prepare_tools; then why="building the control plane"
    else
        e2e_init
        if ! e2e_start_cluster; then why="cluster did not start"
        elif [[ $scheduler == scheduler ]] && ! e2e_start_scheduler; then why="kube-scheduler did not start"
        fi
    fi
    [[ -z $why ]] && return 0
    echo "FAIL - $name: $why"
    echo "0 passed, 1 failed"
    return 1
}

# e2e_make_ca DIR NAME : self-signed CA DIR/NAME.{key,crt}
e2e_make_ca() {
    local dir=$1 name=$2
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 \
        -keyout "$dir/$name.key" -out "$dir/$name.crt" \
        -subj "/CN=gpuguard-e2e-$name-$RANDOM" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
}

# e2e_make_cert DIR CA NAME SUBJ USAGE [SAN] : DIR/NAME.{key,crt} signed by DIR/CA.{key,crt}
#   USAGE: serverAuth | clientAuth
e2e_make_cert() {
    local dir=$1 ca=$2 name=$3 subj=$4 usage=$5 san=${6:-}
    local ext=$dir/$name.ext
    {
        echo "basicConstraints=critical,CA:FALSE"
        echo "keyUsage=critical,digitalSignature,keyEncipherment"
        echo "extendedKeyUsage=$usage"
        [[ -n $san ]] && echo "subjectAltName=$san"
    } >"$ext"
    openssl req -new -newkey rsa:2048 -nodes -sha256 -keyout "$dir/$name.key" \
        -out "$dir/$name.csr" -subj "$subj" 2>/dev/null
    openssl x509 -req -sha256 -days 2 -in "$dir/$name.csr" -CA "$dir/$ca.crt" -CAkey "$dir/$ca.key" \
        -CAcreateserial -out "$dir/$name.crt" -extfile "$ext" 2>/dev/null
    rm -f "$dir/$name.csr" "$ext"
}

e2e_make_pki() {
    local p=$E2E_WORK/pki
    mkdir -p "$p"
    e2e_make_ca "$p" ca
    e2e_make_cert "$p" ca apiserver "/CN=kube-apiserver" serverAuth \
        "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1"
    e2e_make_cert "$p" ca admin "/O=system:masters/CN=e2e-admin" clientAuth
    openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
    openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
}

e2e_write_kubeconfig() {
    local p=$E2E_WORK/pki
    cat >"$KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$E2E_APISERVER_PORT
    certificate-authority: $p/ca.crt
users:
- name: e2e-admin
  user:
    client-certificate: $p/admin.crt
    client-key: $p/admin.key
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin, namespace: default}
current-context: e2e
EOF
}

e2e_readyz() {
    local p=$E2E_WORK/pki
    [[ $(curl -sS --max-time 3 --cacert "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key" \
        "https://127.0.0.1:$E2E_APISERVER_PORT/readyz" 2>/dev/null) == ok ]]
}

e2e_etcd_healthy() {
    curl -sS --max-time 2 "http://127.0.0.1:$E2E_ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'
}

# e2e_start_apiserver : kube-apiserver on $E2E_APISERVER_PORT against the running etcd, waits
# for /readyz (120 s). Also restarts it after e2e_stop_pid "$E2E_APISERVER_PID".
e2e_start_apiserver() {
    local p=$E2E_WORK/pki
    e2e_bg kube-apiserver "$KUBE_APISERVER" \
        --etcd-servers="http://127.0.0.1:$E2E_ETCD_PORT" \
        --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
        --secure-port="$E2E_APISERVER_PORT" \
        --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
        --client-ca-file="$p/ca.crt" \
        --service-account-key-file="$p/sa.pub" \
        --service-account-signing-key-file="$p/sa.key" \
        --service-account-issuer=https://kubernetes.default.svc \
        ${E2E_FEATURE_GATES:+--feature-gates="$E2E_FEATURE_GATES"} \
        --service-cluster-ip-range=10.96.0.0/16 \
        --authorization-mode=RBAC \
        --enable-admission-plugins=NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultTolerationSeconds,DefaultStorageClass,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota,Priority \
        --endpoint-reconciler-type=none \
        --allow-privileged=true \
        --profiling=false \
        --v=1 \
        "${E2E_APISERVER_EXTRA_ARGS[@]}"
    E2E_APISERVER_PID=$E2E_LAST_PID
    local deadline=$((SECONDS + 120))
    until e2e_readyz; do
        if ! kill -0 "$E2E_APISERVER_PID" 2>/dev/null; then
            e2e_log "kube-apiserver exited"; tail -n 30 "$E2E_WORK/kube-apiserver.log" >&2; return 1
        fi
        if ((SECONDS >= deadline)); then
            e2e_log "kube-apiserver not ready after 120 s"; tail -n 30 "$E2E_WORK/kube-apiserver.log" >&2; return 1
        fi
        sleep 0.25
    done
}

e2e_start_cluster() {
    local t0=$SECONDS p=$E2E_WORK/pki port
    # another run on the same machine may hold the default ports: move up in steps of 10
    E2E_ETCD_PORT=$(e2e_pick_port "$E2E_ETCD_PORT" 2) || return 1
    E2E_APISERVER_PORT=$(e2e_pick_port "$E2E_APISERVER_PORT" 1) || return 1
    e2e_make_pki
    e2e_write_kubeconfig

    e2e_bg etcd "$ETCD" --name e2e --data-dir "$E2E_WORK/etcd-data" \
        --listen-client-urls "http://127.0.0.1:$E2E_ETCD_PORT" \
        --advertise-client-urls "http://127.0.0.1:$E2E_ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$((E2E_ETCD_PORT + 1))" \
        --initial-advertise-peer-urls "http://127.0.0.1:$((E2E_ETCD_PORT + 1))" \
        --initial-cluster "e2e=http://127.0.0.1:$((E2E_ETCD_PORT + 1))" \
        --log-level warn
    E2E_ETCD_PID=$E2E_LAST_PID
    if ! e2e_wait_for "etcd /health" 60 e2e_etcd_healthy; then
        tail -n 30 "$E2E_WORK/etcd.log" >&2; return 1
    fi

    e2e_start_apiserver || return 1
    # the "default" namespace is created by the apiserver's own bootstrap controller
    e2e_wait_for "namespace default" 60 e2e_kubectl get namespace default || return 1
    e2e_ns_prepare default || return 1
    e2e_log "etcd + kube-apiserver ($("$KUBE_APISERVER" --version)) ready on 127.0.0.1:$E2E_APISERVER_PORT in $((SECONDS - t0)) s"
}

e2e_scheduler_ready() {
    [[ $(curl -sSk --max-time 3 "https://127.0.0.1:$E2E_SCHEDULER_PORT/readyz" 2>/dev/null) == ok ]]
}

# e2e_start_scheduler : kube-scheduler (default profile, no leader election) against the test
# API server, with the admin kubeconfig; /readyz on 127.0.0.1:$E2E_SCHEDULER_PORT.
e2e_start_scheduler() {
    local t0=$SECONDS
    E2E_SCHEDULER_PORT=$(e2e_pick_port "$E2E_SCHEDULER_PORT" 1) || return 1
    e2e_bg kube-scheduler "$KUBE_SCHEDULER" \
        --kubeconfig="$KUBECONFIG" \
        --authentication-kubeconfig="$KUBECONFIG" --authorization-kubeconfig="$KUBECONFIG" \
        --bind-address=127.0.0.1 --secure-port="$E2E_SCHEDULER_PORT" \
        --cert-dir="$E2E_WORK/kube-scheduler-certs" \
        --leader-elect=false \
        ${E2E_FEATURE_GATES:+--feature-gates="$E2E_FEATURE_GATES"} \
        --v=1
    E2E_SCHEDULER_PID=$E2E_LAST_PID
    local deadline=$((SECONDS + 120))
    until e2e_scheduler_ready; do
        if ! kill -0 "$E2E_SCHEDULER_PID" 2>/dev/null; then
            e2e_log "kube-scheduler exited"; tail -n 30 "$E2E_WORK/kube-scheduler.log" >&2; return 1
        fi
        if ((SECONDS >= deadline)); then
            e2e_log "kube-scheduler not ready after 120 s"; tail -n 30 "$E2E_WORK/kube-scheduler.log" >&2; return 1
        fi
        sleep 0.25
    done
    e2e_log "kube-scheduler ($("$KUBE_SCHEDULER" --version)) ready on 127.0.0.1:$E2E_SCHEDULER_PORT in $((SECONDS - t0)) s"
}

# Without kube-controller-manager nobody creates sa/default or cm/kube-root-ca.crt;
# the ServiceAccount admission plugin rejects Pods in a namespace without sa/default.
e2e_ns_prepare() {
    local ns=$1
    e2e_kubectl -n "$ns" get serviceaccount default >/dev/null 2>&1 ||
        e2e_kubectl -n "$ns" create serviceaccount default >/dev/null || return 1
    e2e_kubectl -n "$ns" get configmap kube-root-ca.crt >/dev/null 2>&1 ||
        e2e_kubectl -n "$ns" create configmap kube-root-ca.crt --from-file=ca.crt="$E2E_WORK/pki/ca.crt" >/dev/null || return 1
}

e2e_ns() {
    local ns=$1
    e2e_kubectl get namespace "$ns" >/dev/null 2>&1 || e2e_kubectl create namespace "$ns" >/dev/null || return 1
    e2e_ns_prepare "$ns"
}

# e2e_python : a python3 that has PyYAML (oracle.py reads documents the way kubectl does with it)
e2e_python() {
    local py
    for py in python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null && "$py" -c 'import yaml' 2>/dev/null; then echo "$py"; return 0; fi
    done
    e2e_log "installing python3-yaml"
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q --no-install-recommends python3-yaml >&2 ||
        { timeout 600 apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive timeout 600 \
            apt-get install -y -q --no-install-recommends python3-yaml >&2; }
    /usr/bin/python3 -c 'import yaml' 2>/dev/null && { echo /usr/bin/python3; return 0; }
    echo python3   # oracle.py still runs without PyYAML, with less insight
}

# e2e_oracle LINT CORPUS REPORT UPDATE_DOC : compare `kubectl apply --dry-run=server` with
# gpuguard-lint on every built-in workload document of test/e2e/cases and CORPUS (oracle.py).
# Prints one line per document; sets E2E_ORACLE_COUNTS="passed failed". UPDATE_DOC=1 rewrites
# the generated part of docs/e2e-oracle.md with the report.
e2e_oracle() {
    local lint=$1 corpus=$2 report=$3 update=${4:-0}
    local here root
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    local inputs=(--input "$here/cases" --label "test/e2e/cases")
    if [[ -d $corpus ]]; then
        inputs+=(--input "$corpus" --label "../shared/corpus/real")
    else
        e2e_log "no corpus at $corpus: comparing the test cases only"
    fi
    timeout 1200 "$(e2e_python)" "$here/oracle.py" --lint "$lint" --root "$root" "${inputs[@]}" \
        --known "$here/oracle-known.tsv" --ca-file "$E2E_WORK/pki/ca.crt" --report "$report" \
        --versions "${E2E_VERSIONS:-kube-apiserver}" \
        ${ORACLE_DUMP:+--dump "$ORACLE_DUMP"} >"$E2E_WORK/oracle.out" 2>&1
    local rc=$?
    grep -v '^ORACLE_COUNTS ' "$E2E_WORK/oracle.out"
    E2E_ORACLE_COUNTS=$(sed -n 's/^ORACLE_COUNTS //p' "$E2E_WORK/oracle.out")
    [[ -n $E2E_ORACLE_COUNTS ]] || { E2E_ORACLE_COUNTS="0 1"; rc=1; }
    e2e_log "oracle report: $report"
    if [[ $update == 1 && -s $report ]]; then
        e2e_update_doc "$root/docs/e2e-oracle.md" "<!-- BEGIN GENERATED by test/e2e/oracle.sh -->" \
            "<!-- END GENERATED -->" "$report"
    fi
    return $rc
}

# e2e_update_doc DOC BEGIN END REPORT : replace what lies between the BEGIN and END markers of DOC
e2e_update_doc() {
    python3 - "$@" <<'PY' && e2e_log "updated $1"
import sys
doc, b, e, rep = sys.argv[1], sys.argv[2], sys.argv[3], open(sys.argv[4]).read()
text = open(doc).read()
i = text.index(b) + len(b)
j = text.index(e, i)
open(doc, "w").write(text[:i] + "\n" + rep + text[j:])
PY
}

# e2e_sched_oracle LINT REPORT UPDATE_DOC : kube-scheduler against gpuguard-lint and
# gpuguard-lint --nodes on every case of scheduler/cases.yaml (sched_oracle.py). Needs the
# scheduler running (e2e_start_scheduler). Sets E2E_SCHED_COUNTS="passed failed".
e2e_sched_oracle() {
    local lint=$1 report=$2 update=${3:-0}
    local here root p=$E2E_WORK/pki
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    root=$(cd "$here/../.." && pwd)
    e2e_ns sched || { E2E_SCHED_COUNTS="0 1"; return 1; }
    timeout 1800 "$(e2e_python)" "$here/sched_oracle.py" --cases "$here/scheduler/cases.yaml" \
        --known "$here/scheduler/known.tsv" --lint "$lint" \
        --server "https://127.0.0.1:$E2E_APISERVER_PORT" --ca "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key" \
        --versions "${E2E_VERSIONS:-the test control plane}" --report "$report" \
        ${SCHED_ORACLE_ONLY:+--only "$SCHED_ORACLE_ONLY"} >"$E2E_WORK/sched-oracle.out" 2>&1
    local rc=$?
    grep -v '^SCHED_COUNTS ' "$E2E_WORK/sched-oracle.out"
    E2E_SCHED_COUNTS=$(sed -n 's/^SCHED_COUNTS //p' "$E2E_WORK/sched-oracle.out")
    [[ -n $E2E_SCHED_COUNTS ]] || { E2E_SCHED_COUNTS="0 1"; rc=1; }
    e2e_log "scheduler oracle report: $report"
    if [[ $update == 1 && -s $report && -z ${SCHED_ORACLE_ONLY:-} ]]; then
        e2e_update_doc "$root/docs/e2e-oracle.md" "<!-- BEGIN GENERATED by test/e2e/sched_oracle.py -->" \
            "<!-- END GENERATED scheduler oracle -->" "$report"
    fi
    return $rc
}
