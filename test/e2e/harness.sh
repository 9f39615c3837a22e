# shellcheck shell=bash
# The e2e harness: case bookkeeping (case_begin/expect_*/case_end), kubectl, the webhook process
# and its certificates, the ValidatingWebhookConfiguration. Sourced by test/e2e/run.sh.

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

denied_by() { echo "admission webhook \"$1\" denied the request:"; }
