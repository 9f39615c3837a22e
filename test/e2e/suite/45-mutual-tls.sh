# shellcheck shell=bash
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
