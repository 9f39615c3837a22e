# shellcheck shell=bash
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
