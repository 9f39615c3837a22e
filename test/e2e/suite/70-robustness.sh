# shellcheck shell=bash
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
