# shellcheck shell=bash
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
