# shellcheck shell=bash
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
