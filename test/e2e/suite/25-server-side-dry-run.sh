# shellcheck shell=bash
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
