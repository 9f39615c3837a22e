# shellcheck shell=bash
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
