#!/usr/bin/env bash
# gpuguard end-to-end suite: a real kube-apiserver + etcd (+ kube-scheduler) on 127.0.0.1, built
# from the Go modules pinned in controlplane/go.mod; the real gpuguard-webhook registered through
# ValidatingWebhookConfigurations (the shipped one included); cases run with kubectl 1.35.
# Then the two oracles: the API server judges the same documents as gpuguard-lint, and
# kube-scheduler judges the same pods and nodes as gpuguard-lint and gpuguard-lint --nodes.
#
#   bash test/e2e/run.sh            (from anywhere; needs root the first time for apt-get)
#
#   GPUGUARD_WEBHOOK      webhook binary (default <repo>/build/gpuguard-webhook)
#   GPUGUARD_E2E_CACHE    control-plane build cache (default /var/cache/gpuguard-e2e)
#   E2E_WEBHOOK_PORT      first webhook port (default 20500; the others use +1, +2)
#   E2E_KEEP=1            keep the work dir (logs, certs) even on success
#   E2E_ORACLE=0          skip the API-server oracle (see oracle.sh); GPUGUARD_LINT, GPUGUARD_CORPUS as there
#   E2E_SCHED_ORACLE=0    skip the scheduler oracle (see sched-oracle.sh)
#   E2E_CLUSTER_FACTS=0   skip the cluster facts cases (see cluster-facts.sh)
#   E2E_AUDIT=0           skip --pending live and the background audit (see audit.sh)
#
# Prints "control plane: kube-apiserver vX.Y.Z, kube-scheduler vX.Y.Z, etcd vA.B.C" first, one
# line per case ("ok - ..." / "FAIL - ..."), the time taken, and finally
# "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"

T_START=$SECONDS
WEBHOOK=${GPUGUARD_WEBHOOK:-$ROOT/build/gpuguard-webhook}
[[ $WEBHOOK == /* ]] || WEBHOOK=$ROOT/$WEBHOOK
CASES=$HERE/cases
WH_PORT=${E2E_WEBHOOK_PORT:-20500}
WARN_PORT=$((WH_PORT + 1))
STRICT=strict.gpuguard.e2e
WARN=warn.gpuguard.e2e
MTLS=mtls.gpuguard.e2e
PASSED=0
FAILED=0
FAILED_NAMES=()

summary() {
    echo "e2e: took $((SECONDS - T_START)) s (control-plane build/cache check included)"
    if ((FAILED)); then printf 'e2e: failed: %s\n' "${FAILED_NAMES[@]}"; fi
    echo "$PASSED passed, $FAILED failed"
}

setup_failed() {
    echo "FAIL - setup: $*"
    FAILED=$((FAILED + 1)); FAILED_NAMES+=("setup: $*")
    for f in "$E2E_WORK"/*.log; do
        [[ -f $f ]] || continue
        echo "--- last lines of $(basename "$f")"; tail -n 20 "$f" | sed 's/^/    /'
    done
    summary
    exit 1
}

# ---- case helpers ------------------------------------------------------------------
# kc ARGS... : run kubectl, keep the combined stdout+stderr in $OUT and the status in $RC.
# Lines kubectl adds about client/server version skew are dropped: they are not ours.
kc() {
    OUT=$(e2e_kubectl "$@" 2>&1)
    RC=$?
    OUT=$(grep -v -e '^WARNING: version difference' -e '^W[0-9]\{4\} .*version' <<<"$OUT")
    LAST_CMD="kubectl $*"
}

case_begin() { CASE_NAME=$1; CASE_PROBLEMS=(); CASE_LOG=""; }
note_output() { CASE_LOG+="\$ $LAST_CMD"$'\n'"$OUT (exit $RC)"$'\n'; }
problem() { CASE_PROBLEMS+=("$*"); }
expect_ok() { note_output; ((RC == 0)) || problem "expected success: $LAST_CMD"; }
expect_fail() { note_output; ((RC != 0)) || problem "expected failure: $LAST_CMD"; }
expect_out() {
    local s
    for s in "$@"; do grep -qF -- "$s" <<<"$OUT" || problem "output lacks: $s"; done
}
expect_no_out() {
    local s
    for s in "$@"; do grep -qF -- "$s" <<<"$OUT" && problem "output should not contain: $s"; done
    return 0
}
# expect_warning RULE [TEXT...] : a "Warning: " line that names RULE (as "[RULE]" or "RULE: ")
# and contains every TEXT
expect_warning() {
    local rule=$1 line t found=0; shift
    while IFS= read -r line; do
        [[ $line == "Warning: "* ]] || continue
        [[ $line == *"[$rule]"* || $line == *"$rule: "* ]] || continue
        found=1
        for t in "$@"; do [[ $line == *"$t"* ]] || found=0; done
        ((found)) && break
    done <<<"$OUT"
    ((found)) || problem "no Warning: line for $rule${1:+ with: $*}"
}
expect_no_rule_warning() {
    if grep -qE '^Warning: (.*\[[a-z0-9]+(-[a-z0-9]+)+\]|[a-z0-9]+(-[a-z0-9]+)+: )' <<<"$OUT"; then
        problem "unexpected gpuguard warning"
    fi
}
case_end() {
    if ((${#CASE_PROBLEMS[@]} == 0)); then
        echo "ok - $CASE_NAME"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL - $CASE_NAME"
        printf '    problem: %s\n' "${CASE_PROBLEMS[@]}"
        sed 's/^/    | /' <<<"$CASE_LOG"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("$CASE_NAME")
    fi
}

# poll_until DESC TIMEOUT CONDITION_FN : call CONDITION_FN (which runs kc) until it returns 0
poll_until() {
    local desc=$1 timeout=$2 fn=$3 deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        "$fn" && return 0
        sleep 0.5
    done
    e2e_log "timed out after ${timeout}s: $desc"
    return 1
}

# ---- webhook process and certificates ----------------------------------------------
WH=                       # set in setup: $E2E_WORK/webhook
served_serial() {           # served_serial PORT -> "serial=..." of the certificate being served
    timeout 10 openssl s_client -connect "127.0.0.1:$1" </dev/null 2>/dev/null |
        openssl x509 -noout -serial 2>/dev/null
}
cert_serial() { openssl x509 -noout -serial -in "$1"; }
webhook_healthy() {         # webhook_healthy PORT : TLS verified against the webhook CA
    # the client certificate is ignored by webhooks that do not ask for one
    [[ $(curl -sS -o /dev/null -w '%{http_code}' --max-time 3 --cacert "$WH/ca.crt" \
        --cert "$WH/apiserver-client.crt" --key "$WH/apiserver-client.key" \
        "https://127.0.0.1:$1/healthz" 2>/dev/null) == 200 ]]
}

start_webhook() {           # start_webhook NAME PORT CERT KEY [extra args]
    local name=$1 port=$2 cert=$3 key=$4; shift 4
    e2e_port_free "$port" || { e2e_log "port $port in use"; return 1; }
    # --cluster-facts=off: these cases judge blind, as before (the KUBECONFIG exported here is
    # the admin's); cluster-facts.sh runs the webhook with facts, as a least-privilege account.
    e2e_bg "webhook-$name" "$WEBHOOK" --tls-cert-file="$cert" --tls-private-key-file="$key" \
        --port="$port" --bind-address=127.0.0.1 --cluster-facts=off "$@"
    eval "PID_$name=$E2E_LAST_PID"
    local pid=$E2E_LAST_PID deadline=$((SECONDS + 30))
    until webhook_healthy "$port"; do
        kill -0 "$pid" 2>/dev/null || { e2e_log "webhook $name exited"; tail -n 20 "$E2E_WORK/webhook-$name.log" >&2; return 1; }
        ((SECONDS < deadline)) || { e2e_log "webhook $name not healthy after 30 s"; return 1; }
        sleep 0.2
    done
}

# new_serving_cert CA_NAME OUT_PREFIX : key+cert for IP:127.0.0.1 signed by $WH/CA_NAME
new_serving_cert() {
    local ca=$1 out=$2
    e2e_make_cert "$WH" "$ca" "$out" "/CN=gpuguard-webhook-e2e" serverAuth "IP:127.0.0.1"
}

write_vwc() {               # write_vwc FAILURE_POLICY CABUNDLE_FILE > yaml
    local fp=$1 bundle
    bundle=$(base64 -w0 <"$2")
    local rules='  rules:
  - apiGroups: ["", apps, batch, ray.io, kubeflow.org, jobset.x-k8s.io]
    apiVersions: ["*"]
    operations: [CREATE, UPDATE, DELETE]
    resources: [pods, deployments, statefulsets, daemonsets, replicasets, jobs, cronjobs, rayclusters, pytorchjobs, jobsets]
    scope: Namespaced
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5'
    cat <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: gpuguard-e2e
webhooks:
- name: $STRICT
  clientConfig:
    url: https://127.0.0.1:$WH_PORT/validate
    caBundle: $bundle
  namespaceSelector:
    matchLabels: {gpuguard-e2e: strict}
  failurePolicy: $fp
$rules
- name: $WARN
  clientConfig:
    url: https://127.0.0.1:$WARN_PORT/validate
    caBundle: $bundle
  namespaceSelector:
    matchLabels: {gpuguard-e2e: warn}
  failurePolicy: Fail
$rules
- name: $MTLS
  clientConfig:
    url: https://127.0.0.1:$MTLS_PORT/validate
    caBundle: $bundle
  namespaceSelector:
    matchLabels: {gpuguard-e2e: mtls}
  failurePolicy: Fail
$rules
EOF
}

register_webhooks() {       # register_webhooks FAILURE_POLICY CABUNDLE_FILE
    write_vwc "$1" "$2" >"$E2E_WORK/vwc.yaml"
    kc apply -f "$E2E_WORK/vwc.yaml"
    ((RC == 0)) || { echo "$OUT" >&2; return 1; }
}

# ======================================================================================
# setup
# ======================================================================================
e2e_log "repo: $ROOT; webhook binary: $WEBHOOK"
e2e_prepare_tools || { echo "FAIL - setup: building the control plane / installing kubectl"; FAILED=1; summary; exit 1; }
[[ -x $WEBHOOK ]] || { echo "FAIL - setup: no webhook binary at $WEBHOOK (build the project first, or set GPUGUARD_WEBHOOK)"; FAILED=1; summary; exit 1; }

e2e_init
# webhook PKI: a throw-away CA the API server trusts via caBundle (one serving cert per
# webhook), and a client CA + client certificate the API server presents to webhooks
# (AdmissionConfiguration kubeConfigFile, user "*") for the mutual-TLS webhook.
WH=$E2E_WORK/webhook
mkdir -p "$WH/strict" "$WH/warn-data-1" "$WH/mtls"
e2e_make_ca "$WH" ca
e2e_make_ca "$WH" foreign-ca
e2e_make_ca "$WH" client-ca
e2e_make_cert "$WH" client-ca apiserver-client "/CN=kube-apiserver-webhook-client" clientAuth
e2e_make_cert "$WH" foreign-ca stranger-client "/CN=stranger" clientAuth
cat >"$WH/admission-kubeconfig.yaml" <<KCFG
apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: $WH/apiserver-client.crt
    client-key: $WH/apiserver-client.key
KCFG
cat >"$WH/admission-config.yaml" <<ACFG
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $WH/admission-kubeconfig.yaml
ACFG
E2E_APISERVER_EXTRA_ARGS=(--admission-control-config-file="$WH/admission-config.yaml")

e2e_start_cluster || setup_failed "etcd/kube-apiserver did not start"
WH_PORT=$(e2e_pick_port "$WH_PORT" 3) || setup_failed "no free webhook port"
WARN_PORT=$((WH_PORT + 1))
MTLS_PORT=$((WH_PORT + 2))

kc apply -f "$HERE/crds/crds.yaml" || true
((RC == 0)) || setup_failed "CRDs: $OUT"
kc wait --for=condition=established --timeout=60s \
    crd/rayclusters.ray.io crd/pytorchjobs.kubeflow.org crd/jobsets.jobset.x-k8s.io
((RC == 0)) || setup_failed "CRDs not established: $OUT"

for ns in e2e-strict e2e-warn e2e-legacy e2e-down e2e-mtls; do
    e2e_ns "$ns" || setup_failed "namespace $ns"
done
kc label namespace e2e-strict e2e-legacy e2e-down gpuguard-e2e=strict
((RC == 0)) || setup_failed "label namespaces: $OUT"
kc label namespace e2e-warn gpuguard-e2e=warn
((RC == 0)) || setup_failed "label namespaces: $OUT"
kc label namespace e2e-mtls gpuguard-e2e=mtls
((RC == 0)) || setup_failed "label namespaces: $OUT"
# the API server's REST mapping for new CRDs can lag the Established condition by a moment
crd_usable() { kc get rayclusters,pytorchjobs,jobsets -n e2e-legacy; ((RC == 0)); }
poll_until "CRD resources served" 30 crd_usable || setup_failed "CRD resources not served: $OUT"

# Objects admitted before gpuguard existed (bad ones included): later updates must work.
kc apply -n e2e-legacy -f "$CASES/raycluster-fractional.yaml" -f "$CASES/pytorchjob-mismatch.yaml"
((RC == 0)) || setup_failed "legacy objects: $OUT"

new_serving_cert ca mtls-1 && mv "$WH/mtls-1.crt" "$WH/mtls/tls.crt" && mv "$WH/mtls-1.key" "$WH/mtls/tls.key"
new_serving_cert ca strict-1 && mv "$WH/strict-1.crt" "$WH/strict/tls.crt" && mv "$WH/strict-1.key" "$WH/strict/tls.key"
# the warn webhook reads its files the way a Kubernetes secret volume presents them:
# tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/ (swapped atomically on update)
new_serving_cert ca warn-1 && mv "$WH/warn-1.crt" "$WH/warn-data-1/tls.crt" && mv "$WH/warn-1.key" "$WH/warn-data-1/tls.key"
mkdir -p "$WH/warn"
ln -s ../warn-data-1 "$WH/warn/..data"
ln -s ..data/tls.crt "$WH/warn/tls.crt"
ln -s ..data/tls.key "$WH/warn/tls.key"
cp "$WH/ca.crt" "$WH/bundle-0.pem"

cat >"$WH/warn-policy.yaml" <<'EOF'
# every finding of these rules becomes a warning: the object is admitted, kubectl prints "Warning: ..."
rules:
  gpu-fractional: warning
  gpu-requests-limits-mismatch: warning
  gpu-requests-without-limits: warning
  gpu-missing-toleration: warning
  gpu-missing-driver-pin: warning
EOF

start_webhook strict "$WH_PORT" "$WH/strict/tls.crt" "$WH/strict/tls.key" || setup_failed "gpuguard-webhook (strict)"
start_webhook warn "$WARN_PORT" "$WH/warn/tls.crt" "$WH/warn/tls.key" --policy="$WH/warn-policy.yaml" ||
    setup_failed "gpuguard-webhook (warn)"
start_webhook mtls "$MTLS_PORT" "$WH/mtls/tls.crt" "$WH/mtls/tls.key" --client-ca-file="$WH/client-ca.crt" ||
    setup_failed "gpuguard-webhook (mutual TLS)"
register_webhooks Fail "$WH/bundle-0.pem" || setup_failed "ValidatingWebhookConfiguration"

# wait until the API server actually calls the webhook (its config informer lags a little)
webhook_active() {
    kc apply --dry-run=server -n e2e-strict -f "$CASES/raycluster-fractional.yaml"
    grep -qF "admission webhook \"$STRICT\" denied the request" <<<"$OUT"
}
poll_until "webhook registration effective" 30 webhook_active || setup_failed "webhook never called: $OUT"
e2e_log "setup done in $((SECONDS - T_START)) s"

# ======================================================================================
# cases
# ======================================================================================
denied_by() { echo "admission webhook \"$1\" denied the request:"; }

# ---- custom resources: the API server stores any pod template; only gpuguard judges it --
case_begin "RayCluster with 500m GPU is denied with gpuguard's field error"
kc apply -n e2e-strict -f "$CASES/raycluster-fractional.yaml"
expect_fail
expect_out "Error from server (Forbidden)" "$(denied_by $STRICT)" \
    'spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m"' \
    "[gpu-fractional]"
kc get raycluster rc-fractional -n e2e-strict
expect_fail
expect_out "NotFound"
case_end

case_begin "PyTorchJob with GPU requests 1 / limits 2 is denied"
kc apply -n e2e-strict -f "$CASES/pytorchjob-mismatch.yaml"
expect_fail
expect_out "$(denied_by $STRICT)" "pytorchReplicaSpecs" ".template.spec.containers[0].resources.requests" \
    "[gpu-requests-limits-mismatch]"
case_end

case_begin "JobSet with GPU requests but no limits is denied"
kc apply -n e2e-strict -f "$CASES/jobset-requests-only.yaml"
expect_fail
expect_out "$(denied_by $STRICT)" \
    "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources" \
    "[gpu-requests-without-limits]"
case_end

for f in raycluster-good:raycluster.ray.io/rc-good pytorchjob-good:pytorchjob.kubeflow.org/ptj-good \
         jobset-good:jobset.jobset.x-k8s.io/js-good; do
    case_begin "good ${f%%:*} is admitted without warnings"
    kc apply -n e2e-strict -f "$CASES/${f%%:*}.yaml"
    expect_ok
    expect_out "${f#*:} created"
    expect_no_rule_warning
    case_end
done

# ---- built-in kinds ----------------------------------------------------------------
case_begin "good GPU Pod and Deployment are admitted"
kc apply -n e2e-strict -f "$CASES/pod-gpu-good.yaml" -f "$CASES/deployment-good.yaml"
expect_ok
expect_out "pod/pod-gpu-good created" "deployment.apps/dep-gpu-good created"
expect_no_rule_warning
case_end

# 1.20 did not validate StatefulSet pod templates (gpuguard was the only judge); current API
# servers do, before any webhook
case_begin "StatefulSet with 250m GPU is rejected by the API server itself (422) before any webhook"
kc apply -n e2e-strict -f "$CASES/statefulset-fractional.yaml"
expect_fail
expect_out 'The StatefulSet "sts-gpu-fractional" is invalid' \
    'spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "250m": must be an integer'
expect_no_out "admission webhook"
case_end

case_begin "Pod with 0.5 GPU is rejected by the API server itself (422) before any webhook"
kc apply -n e2e-strict -f "$CASES/pod-gpu-fractional.yaml"
expect_fail
expect_out 'The Pod "pod-gpu-fractional" is invalid' \
    "spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value:" "must be an integer"
expect_no_out "admission webhook"
case_end

case_begin "Deployment with GPU requests only is rejected by the API server (422)"
kc apply -n e2e-strict -f "$CASES/deployment-requests-only.yaml"
expect_fail
expect_out 'The Deployment "dep-gpu-requests-only" is invalid' \
    "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
expect_no_out "admission webhook"
case_end

case_begin "Pod with an unquoted integer nodeSelector value fails to decode (400)"
kc apply -n e2e-strict -f "$CASES/pod-nodeselector-int.yaml"
expect_fail
expect_out "Error from server (BadRequest)" "cannot be handled as a Pod"
# 1.20 (json-iterator) said "NodeSelector: ReadString: expects \" or n", current releases
# (encoding/json) "cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string"
grep -qi "nodeSelector" <<<"$OUT" || problem "output does not name the nodeSelector"
expect_no_out "admission webhook"
case_end

# resource.k8s.io/v1beta1 and v1beta2 are off by default in 1.37 (pkg/controlplane/instance.go,
# betaAPIGroupVersionsDisabledByDefault): kubectl finds no such kind; gpuguard-lint's
# dra-with-device-plugin says so on each object (reference §15.2)
case_begin "DRA objects of resource.k8s.io/v1beta1 and v1beta2 are not served (no matches for kind), as gpuguard-lint says"
kc apply --dry-run=server -f "$CASES/dra-v1beta.yaml"
expect_fail
expect_out 'no matches for kind "ResourceClaimTemplate" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "DeviceClass" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "ResourceClaim" in version "resource.k8s.io/v1beta2"'
OUT=$("${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}" "$CASES/dra-v1beta.yaml" 2>&1); RC=$?
LAST_CMD="gpuguard-lint $CASES/dra-v1beta.yaml"
note_output
((RC == 0)) || problem "gpuguard-lint: warnings only, expected exit 0 (got $RC)"
expect_out 'apiVersion: resource.k8s.io/v1beta1 is not served by a default Kubernetes 1.37 API server' \
    'no matches for kind "ResourceClaimTemplate" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "DeviceClass" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "ResourceClaim" in version "resource.k8s.io/v1beta2"' \
    '0 errors, 3 warnings'
case_end

# adminAccess: true needs resource.kubernetes.io/admin-access: "true" on the claim's namespace
# (pkg/registry/resource/utils.go AuthorizedForAdmin); gpuguard-lint knows the Namespace from the
# same file and reports the API server's Forbidden as an error (reference §15.2)
case_begin "adminAccess in a namespace without the admin-access label: Forbidden, as gpuguard-lint says"
kc create namespace e2e-dra-admin
kc apply --dry-run=server -f "$CASES/dra-admin-access.yaml"
expect_fail
expect_out 'admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace'
OUT=$("${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}" "$CASES/dra-admin-access.yaml" 2>&1); RC=$?
LAST_CMD="gpuguard-lint $CASES/dra-admin-access.yaml"
note_output
((RC == 1)) || problem "gpuguard-lint: expected exit 1 for the error (got $RC)"
expect_out 'Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace' \
    '[dra-with-device-plugin]'
kc label namespace e2e-dra-admin resource.kubernetes.io/admin-access=true
kc apply --dry-run=server -f "$CASES/dra-admin-access.yaml"
expect_ok
case_end

# ---- warn-level findings -------------------------------------------------------------
case_begin "policy at warning: 500m RayCluster is admitted with a Warning: line"
kc apply -n e2e-warn -f "$CASES/raycluster-fractional.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-fractional created"
expect_warning gpu-fractional \
    'spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m"' 
case_end

case_begin "policy at warning: missing toleration and driver pin show as Warning: lines"
kc apply -n e2e-warn -f "$CASES/raycluster-no-toleration.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-no-toleration created"
expect_warning gpu-missing-toleration "spec.workerGroupSpecs[0].template.spec.tolerations"
expect_warning gpu-missing-driver-pin "spec.workerGroupSpecs[0].template.spec"
case_end

case_begin "policy at warning: the warning also shows on --dry-run=server and nothing is stored"
kc apply --dry-run=server -n e2e-warn -f "$CASES/jobset-requests-only.yaml"
expect_ok
expect_out "jobset.jobset.x-k8s.io/js-requests-only created (server dry run)"
expect_warning gpu-requests-without-limits "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits"
kc get jobset js-requests-only -n e2e-warn
expect_fail
case_end

# ---- server-side dry run -----------------------------------------------------------------
case_begin "--dry-run=server of a bad JobSet is denied with our message and nothing is stored"
kc apply --dry-run=server -n e2e-strict -f "$CASES/jobset-requests-only.yaml"
expect_fail
expect_out "$(denied_by $STRICT)" "[gpu-requests-without-limits]"
kc get jobset js-requests-only -n e2e-strict
expect_fail
expect_out "NotFound"
case_end

case_begin "--dry-run=server of a good RayCluster is admitted and nothing is stored"
kc apply --dry-run=server -n e2e-legacy -f "$CASES/raycluster-good.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-good created (server dry run)"
kc get raycluster rc-good -n e2e-legacy
expect_fail
case_end

# ---- updates -----------------------------------------------------------------------
case_begin "kubectl label of objects admitted before the webhook existed still works"
kc label raycluster rc-fractional -n e2e-legacy team=ml
expect_ok
expect_out "raycluster.ray.io/rc-fractional labeled"
# the problem the object already had is not the update's fault: it is shown, not denied
expect_warning gpu-fractional "spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]"
kc annotate pytorchjob ptj-mismatch -n e2e-legacy owner=e2e
expect_ok
expect_out "pytorchjob.kubeflow.org/ptj-mismatch annotated"
case_end

case_begin "UPDATE that makes a good RayCluster fractional is denied"
kc patch raycluster rc-good -n e2e-strict --type=json \
    -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/template/spec/containers/0/resources/limits/nvidia.com~1gpu","value":"1500m"},{"op":"replace","path":"/spec/workerGroupSpecs/0/template/spec/containers/0/resources/requests/nvidia.com~1gpu","value":"1500m"}]'
expect_fail
expect_out "$(denied_by $STRICT)" 'Invalid value: "1500m"' "[gpu-fractional]"
case_end

case_begin "UPDATE of a good object (label, re-apply with a change, --dry-run=server) is admitted"
kc label raycluster rc-good -n e2e-strict team=ml
expect_ok
sed 's/replicas: 1$/replicas: 2/' "$CASES/raycluster-good.yaml" >"$E2E_WORK/rc-good-2.yaml"
kc apply -n e2e-strict -f "$E2E_WORK/rc-good-2.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-good configured"
expect_no_rule_warning
kc label pod pod-gpu-good -n e2e-strict --dry-run=server tier=gpu
expect_ok
case_end

# ---- deletes -------------------------------------------------------------------------
case_begin "DELETE is allowed (bad legacy object, Pod, --dry-run=server)"
kc delete --dry-run=server raycluster rc-good -n e2e-strict
expect_ok
kc get raycluster rc-good -n e2e-strict
expect_ok
kc delete raycluster rc-fractional -n e2e-legacy --timeout=30s
expect_ok
expect_out 'raycluster.ray.io "rc-fractional" deleted'
kc delete pod pod-gpu-good -n e2e-strict --grace-period=0 --force --timeout=30s
expect_ok
kc delete deployment dep-gpu-good -n e2e-strict --timeout=30s
expect_ok
case_end

# ---- webhook health endpoints --------------------------------------------------------
case_begin "webhook serves /healthz, /readyz and /metrics over TLS"
for ep in healthz readyz metrics; do
    code=$(curl -sS -o "$E2E_WORK/ep-$ep.out" -w '%{http_code}' --max-time 5 --cacert "$WH/ca.crt" \
        "https://127.0.0.1:$WH_PORT/$ep" 2>&1)
    [[ $code == 200 ]] || problem "GET /$ep -> $code"
done
[[ -s $E2E_WORK/ep-metrics.out ]] || problem "empty /metrics"
case_end

# ---- mutual TLS: --client-ca-file ---------------------------------------------------------
case_begin "mutual TLS: the webhook with --client-ca-file judges requests from the API server's client certificate"
kc apply --dry-run=server -n e2e-mtls -f "$CASES/raycluster-fractional.yaml"
expect_fail
expect_out "$(denied_by $MTLS)" "[gpu-fractional]"
kc apply --dry-run=server -n e2e-mtls -f "$CASES/raycluster-good.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-good created (server dry run)"
case_end

case_begin "mutual TLS: clients without a certificate get 403 (probes excepted); one from another CA is refused"
for who in none stranger trusted; do
    args=()
    [[ $who == stranger ]] && args=(--cert "$WH/stranger-client.crt" --key "$WH/stranger-client.key")
    [[ $who == trusted ]] && args=(--cert "$WH/apiserver-client.crt" --key "$WH/apiserver-client.key")
    code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$WH/ca.crt" "${args[@]}" \
        -X POST -H 'Content-Type: application/json' --data '{}' "https://127.0.0.1:$MTLS_PORT/validate" 2>/dev/null)
    CASE_LOG+="POST /validate with client certificate '$who': HTTP ${code:-none}"$'\n'
    case $who in
    trusted) [[ $code == 400 || $code == 200 ]] || problem "trusted client certificate: HTTP $code, want an answer (400 for '{}')" ;;
    none) [[ $code == 403 ]] || problem "no client certificate: HTTP $code, want 403" ;;
    stranger) [[ $code == 000 || -z $code ]] || problem "client certificate '$who' got HTTP $code, want the TLS handshake refused" ;;
    esac
done
# The kubelet's HTTPS probes present no client certificate.
for ep in healthz readyz; do
    code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$WH/ca.crt" "https://127.0.0.1:$MTLS_PORT/$ep" 2>/dev/null)
    CASE_LOG+="GET /$ep without a client certificate: HTTP ${code:-none}"$'\n'
    [[ $code == 200 ]] || problem "probe /$ep without a client certificate: HTTP $code, want 200"
done
case_end

# ---- the shipped configuration (manifests/base) against a real API server ------------------
# Its clientConfig points at a Service; here it is swapped for url + caBundle (no kubelet).
case_begin "shipped ValidatingWebhookConfiguration (manifests/base): accepted, matches CRs, honours its exemptions"
SHIPPED=validate.gpuguard.io
if timeout 60 kubectl kustomize "$ROOT/manifests/base" >"$E2E_WORK/shipped.yaml" 2>"$E2E_WORK/shipped.err" &&
    python3 "$HERE/shipped-vwc.py" "$E2E_WORK/shipped.yaml" "https://127.0.0.1:$WH_PORT/validate" "$WH/ca.crt" \
        >"$E2E_WORK/shipped-vwc.yaml" 2>>"$E2E_WORK/shipped.err"; then
    SHIPPED_NAME=$(sed -n 's/^# configuration: //p' "$E2E_WORK/shipped-vwc.yaml")
    SHIPPED=$(sed -n 's/^# webhooks: \([^ ]*\).*/\1/p' "$E2E_WORK/shipped-vwc.yaml")
    kc apply -f "$E2E_WORK/shipped-vwc.yaml"
    expect_ok
    e2e_ns e2e-shipped && e2e_ns e2e-optout || problem "namespaces"
    kc label namespace e2e-optout gpuguard.io/webhook=disabled --overwrite
    shipped_denies() {
        kc apply --dry-run=server -n e2e-shipped -f "$CASES/raycluster-fractional.yaml"
        grep -qF "$(denied_by "$SHIPPED")" <<<"$OUT"
    }
    poll_until "shipped webhook effective" 30 shipped_denies || problem "the shipped configuration does not send RayClusters to the webhook"
    note_output
    expect_out "[gpu-fractional]"
    kc apply --dry-run=server -n e2e-shipped -f "$CASES/jobset-requests-only.yaml" -f "$CASES/pytorchjob-mismatch.yaml"
    expect_fail
    expect_out "[gpu-requests-without-limits]" "[gpu-requests-limits-mismatch]"
    kc apply --dry-run=server -n e2e-shipped -f "$CASES/raycluster-good.yaml"
    expect_ok
    kc apply --dry-run=server -n e2e-optout -f "$CASES/raycluster-fractional.yaml"
    expect_ok
    expect_no_out "denied the request"
    # kube-system is exempted by the label kubernetes.io/metadata.name, which the API server
    # sets on every namespace (since 1.21)
    kc get namespace kube-system -o 'jsonpath={.metadata.labels}'
    expect_out '"kubernetes.io/metadata.name":"kube-system"'
    kc apply --dry-run=server -n kube-system -f "$CASES/raycluster-fractional.yaml"
    expect_ok
    expect_no_out "denied the request"
    kc delete validatingwebhookconfiguration "$SHIPPED_NAME"
    expect_ok
else
    problem "could not render the shipped configuration: $(head -c 600 "$E2E_WORK/shipped.err")"
fi
case_end

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
    kc delete mutatingwebhookconfiguration "$MWC_NAME"
    expect_ok
    kc delete validatingwebhookconfiguration "$(sed -n 's/^# configuration: //p' "$E2E_WORK/shipped-vwc.yaml")"
    expect_ok
else
    problem "could not render the shipped MutatingWebhookConfiguration: $(head -c 600 "$E2E_WORK/shipped-mwc.err" 2>/dev/null)"
fi
case_end

# ---- policy file changed on disk, no restart --------------------------------------------
case_begin "policy file changed on disk takes effect without a restart"
# a RayCluster never stored in e2e-warn (so every dry-run apply is a create the webhook judges)
sed 's/name: rc-fractional$/name: rc-fractional-reload/' "$CASES/raycluster-fractional.yaml" >"$E2E_WORK/rc-reload.yaml"
warn_denies() {
    kc apply --dry-run=server -n e2e-warn -f "$E2E_WORK/rc-reload.yaml"
    grep -qF "$(denied_by $WARN)" <<<"$OUT"
}
warn_admits() {
    kc apply --dry-run=server -n e2e-warn -f "$E2E_WORK/rc-reload.yaml"
    ((RC == 0))
}
cp "$WH/warn-policy.yaml" "$WH/warn-policy.yaml.orig"
sed 's/gpu-fractional: warning/gpu-fractional: error/' "$WH/warn-policy.yaml.orig" >"$WH/warn-policy.yaml.new"
mv -f "$WH/warn-policy.yaml.new" "$WH/warn-policy.yaml"
poll_until "policy reload (error)" 30 warn_denies || problem "gpu-fractional: error in the policy file did not deny within 30 s"
note_output
expect_out "[gpu-fractional]"
cp "$WH/warn-policy.yaml.orig" "$WH/warn-policy.yaml.new" && mv -f "$WH/warn-policy.yaml.new" "$WH/warn-policy.yaml"
poll_until "policy reload (warning)" 30 warn_admits || problem "restoring the policy file did not admit again within 30 s"
note_output
expect_warning gpu-fractional
kill -0 "$PID_warn" 2>/dev/null || problem "warn webhook process is gone"
case_end

# ---- certificate rotation on disk, no restart ---------------------------------------------
# rotate_strict CA_NAME TAG : write a new key pair for the strict webhook (rename over the files)
rotate_strict() {
    new_serving_cert "$1" "strict-$2" || return 1
    mv -f "$WH/strict-$2.key" "$WH/strict/tls.key"
    mv -f "$WH/strict-$2.crt" "$WH/strict/tls.crt"
}
wait_serving() {            # wait_serving PORT CERTFILE : until the webhook serves CERTFILE
    local want deadline=$((SECONDS + 60))
    want=$(cert_serial "$2")
    while ((SECONDS < deadline)); do
        [[ $(served_serial "$1") == "$want" ]] && return 0
        sleep 0.5
    done
    e2e_log "port $1 still serves $(served_serial "$1"), want $want"
    return 1
}
probe_strict() { kc apply --dry-run=server -n e2e-strict -f "$CASES/raycluster-fractional.yaml"; }
strict_denies() { probe_strict; grep -qF "$(denied_by $STRICT)" <<<"$OUT"; }
strict_untrusted() { probe_strict; grep -qF "x509: certificate signed by unknown authority" <<<"$OUT"; }

case_begin "certificate rotated on disk (same CA) is served and trusted without a restart"
pid_before=$PID_strict
rotate_strict ca 2 || problem "could not make a certificate"
wait_serving "$WH_PORT" "$WH/strict/tls.crt" || problem "webhook did not pick up the new certificate within 60 s"
webhook_healthy "$WH_PORT" || problem "new certificate does not verify against the CA (curl)"
poll_until "denial after rotation" 30 strict_denies || problem "API server no longer gets our answer"
note_output
kill -0 "$pid_before" 2>/dev/null || problem "webhook process is gone"
case_end

# Control: a certificate from a CA the API server does not trust must break the call; this
# proves the API server really verifies the served certificate on fresh connections.
# A new caBundle (CA + an unrelated CA) gives the API server a new client, so no pooled
# connection with an older certificate can hide the result.
case_begin "control: certificate from an untrusted CA is rejected by the API server (x509)"
e2e_make_ca "$WH" unrelated-ca
cat "$WH/ca.crt" "$WH/unrelated-ca.crt" >"$WH/bundle-1.pem"
rotate_strict foreign-ca 3 || problem "could not make a certificate"
wait_serving "$WH_PORT" "$WH/strict/tls.crt" || problem "webhook did not pick up the new certificate"
register_webhooks Fail "$WH/bundle-1.pem" || problem "re-register: $OUT"
poll_until "x509 error" 30 strict_untrusted || problem "API server did not reject the untrusted certificate"
note_output
expect_out "failed calling webhook \"$STRICT\"" "x509: certificate signed by unknown authority"
case_end

case_begin "rotating back to a certificate from the trusted CA restores the webhook, no restart"
rotate_strict ca 4 || problem "could not make a certificate"
wait_serving "$WH_PORT" "$WH/strict/tls.crt" || problem "webhook did not pick up the new certificate"
poll_until "denial after rotation back" 30 strict_denies || problem "API server does not get our answer"
note_output
expect_out '[gpu-fractional]'
kill -0 "$pid_before" 2>/dev/null || problem "webhook process is gone"
[[ $PID_strict == "$pid_before" ]] || problem "webhook was restarted"
case_end

case_begin "secret-volume style rotation (..data symlink swap) is picked up too"
mkdir -p "$WH/warn-data-2"
new_serving_cert ca warn-2 && mv "$WH/warn-2.crt" "$WH/warn-data-2/tls.crt" && mv "$WH/warn-2.key" "$WH/warn-data-2/tls.key"
ln -s ../warn-data-2 "$WH/warn/..data_tmp" && mv -T "$WH/warn/..data_tmp" "$WH/warn/..data"
wait_serving "$WARN_PORT" "$WH/warn-data-2/tls.crt" || problem "warn webhook did not pick up the swapped certificate within 60 s"
kc apply --dry-run=server -n e2e-warn -f "$E2E_WORK/rc-reload.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-fractional-reload created (server dry run)"
expect_warning gpu-fractional
case_end

# ---- robustness: a request that triggers the per-node GPU count rule ------------------------
case_begin "RayCluster asking for 16 GPUs per pod: admitted with a gpu-count-exceeds-node warning, webhook stays up"
kc apply --dry-run=server -n e2e-strict -f "$CASES/raycluster-16-gpus.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-16-gpus created (server dry run)"
expect_warning gpu-count-exceeds-node
if ! kill -0 "$PID_strict" 2>/dev/null; then
    problem "the webhook process died: $(tail -n 3 "$E2E_WORK/webhook-strict.log" | tr '\n' ' ')"
fi
case_end

# ---- webhook down --------------------------------------------------------------------
case_begin "webhook down + failurePolicy Fail: the API server denies with its connection error"
e2e_stop_pid "$PID_strict"; e2e_forget_pid "$PID_strict"
kc apply -n e2e-down -f "$CASES/raycluster-good.yaml"
expect_fail
expect_out "Error from server (InternalError)" "Internal error occurred: failed calling webhook \"$STRICT\"" \
    "Post \"https://127.0.0.1:$WH_PORT/validate?timeout=5s\"" "dial tcp 127.0.0.1:$WH_PORT: connect: connection refused"
kc get raycluster rc-good -n e2e-down
expect_fail
case_end

case_begin "webhook down + failurePolicy Ignore: the object is admitted"
register_webhooks Ignore "$WH/bundle-1.pem" || problem "re-register: $OUT"
admitted_while_down() { kc apply --dry-run=server -n e2e-down -f "$CASES/raycluster-good.yaml"; ((RC == 0)); }
poll_until "Ignore effective" 30 admitted_while_down || problem "dry-run still fails: $OUT"
kc apply -n e2e-down -f "$CASES/raycluster-good.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-good created"
kc apply -n e2e-down -f "$CASES/raycluster-fractional.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-fractional created"
case_end

case_begin "webhook restarted: denials resume"
register_webhooks Fail "$WH/bundle-1.pem" || problem "re-register: $OUT"
start_webhook strict "$WH_PORT" "$WH/strict/tls.crt" "$WH/strict/tls.key" || problem "restart failed"
poll_until "denial after restart" 30 strict_denies || problem "no denial after restart"
note_output
case_end

# ======================================================================================
# cluster facts: the webhook and gpuguard-lint --cluster as a least-privilege ServiceAccount,
# an API server restart, 410 Gone, RBAC refused (cluster-facts.sh, on its own control plane)
# ======================================================================================
if [[ ${E2E_CLUSTER_FACTS:-1} == 1 ]]; then
    facts_lint=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $facts_lint == /* ]] || facts_lint=$ROOT/$facts_lint
    facts_out=$(GPUGUARD_WEBHOOK=$WEBHOOK GPUGUARD_LINT=$facts_lint timeout 600 bash "$HERE/cluster-facts.sh" 2>&1)
    grep -E '^(ok|FAIL) - ' <<<"$facts_out" | sed 's/^/cluster facts: /; s/^cluster facts: \(ok\|FAIL\) - /\1 - cluster facts: /'
    read -r fp ff < <(tail -n 1 <<<"$facts_out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
    if [[ -z ${fp:-} ]]; then
        echo "FAIL - cluster facts: cluster-facts.sh did not finish: $(tail -n 3 <<<"$facts_out" | tr '\n' ' ')"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("cluster facts: did not finish")
    else
        PASSED=$((PASSED + fp)); FAILED=$((FAILED + ff))
        ((ff == 0)) || FAILED_NAMES+=("cluster facts: $ff cases")
    fi
fi

# ======================================================================================
# issue 27: gpuguard-lint --cluster --pending against kube-scheduler, and the background audit
# into OpenReports with two replicas (audit.sh, on its own control plane)
# ======================================================================================
if [[ ${E2E_AUDIT:-1} == 1 ]]; then
    audit_lint=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $audit_lint == /* ]] || audit_lint=$ROOT/$audit_lint
    audit_out=$(GPUGUARD_WEBHOOK=$WEBHOOK GPUGUARD_LINT=$audit_lint timeout 600 bash "$HERE/audit.sh" 2>&1)
    grep -E '^(ok|FAIL|skip) - ' <<<"$audit_out"
    read -r ap af < <(tail -n 1 <<<"$audit_out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
    if [[ -z ${ap:-} ]]; then
        echo "FAIL - audit: audit.sh did not finish: $(tail -n 3 <<<"$audit_out" | tr '\n' ' ')"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("audit: did not finish")
    else
        PASSED=$((PASSED + ap)); FAILED=$((FAILED + af))
        ((af == 0)) || FAILED_NAMES+=("audit: $af cases")
    fi
fi

# ======================================================================================
# oracle: the API server judges the built-in kinds itself; gpuguard-lint must agree
# ======================================================================================
if [[ ${E2E_ORACLE:-1} == 1 ]]; then
    kc delete validatingwebhookconfiguration gpuguard-e2e
    LINT=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $LINT == /* ]] || LINT=$ROOT/$LINT
    if [[ -x $LINT ]]; then
        e2e_oracle "$LINT" "${GPUGUARD_CORPUS:-$ROOT/../shared/corpus/real}" "$E2E_WORK/oracle.md" 0
        read -r op of <<<"$E2E_ORACLE_COUNTS"
        PASSED=$((PASSED + op)); FAILED=$((FAILED + of))
        ((of == 0)) || FAILED_NAMES+=("oracle: $of documents where gpuguard-lint and the API server disagree")
    else
        echo "FAIL - oracle: no gpuguard-lint at $LINT (set GPUGUARD_LINT, or E2E_ORACLE=0 to skip)"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("oracle: no gpuguard-lint")
    fi
fi

# ======================================================================================
# scheduler oracle: kube-scheduler places the same pods on the same nodes as gpuguard says
# ======================================================================================
if [[ ${E2E_SCHED_ORACLE:-1} == 1 ]]; then
    LINT=${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}
    [[ $LINT == /* ]] || LINT=$ROOT/$LINT
    if [[ ! -x $LINT ]]; then
        echo "FAIL - scheduler oracle: no gpuguard-lint at $LINT (set GPUGUARD_LINT, or E2E_SCHED_ORACLE=0 to skip)"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("scheduler oracle: no gpuguard-lint")
    elif ! e2e_start_scheduler; then
        echo "FAIL - scheduler oracle: kube-scheduler did not start"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("scheduler oracle: kube-scheduler did not start")
    else
        kc delete validatingwebhookconfiguration gpuguard-e2e --ignore-not-found
        e2e_sched_oracle "$LINT" "$E2E_WORK/sched-oracle.md" 0
        read -r sp sf <<<"$E2E_SCHED_COUNTS"
        PASSED=$((PASSED + sp)); FAILED=$((FAILED + sf))
        ((sf == 0)) || FAILED_NAMES+=("scheduler oracle: $sf cases where gpuguard and kube-scheduler disagree")
    fi
fi

# ======================================================================================
# the shipped installs (every chart profile, the script and kustomize installs) through a
# strict server dry run on the same control plane (test/ship/apiserver_test.sh, which ctest
# skips on a machine where this suite has not built the control plane yet)
# ======================================================================================
if [[ ${E2E_SHIP:-1} == 1 ]]; then
    if ship_out=$(GPUGUARD_E2E_CACHE=${GPUGUARD_E2E_CACHE:-/var/cache/gpuguard-e2e} \
                  timeout 600 bash "$ROOT/test/ship/apiserver_test.sh" "$ROOT/build" 2>&1); then
        echo "ok - shipped installs accepted by the API server: $(tail -n 1 <<<"$ship_out")"
        PASSED=$((PASSED + 1))
    else
        printf '%s\n' "$ship_out" | grep -E '^(FAIL|SKIP)' || true
        echo "FAIL - shipped installs: $(tail -n 1 <<<"$ship_out")"
        FAILED=$((FAILED + 1)); FAILED_NAMES+=("shipped installs: server dry run")
    fi
fi

summary
((FAILED == 0))
