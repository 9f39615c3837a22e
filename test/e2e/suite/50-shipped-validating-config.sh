# shellcheck shell=bash
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
