# shellcheck shell=bash
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
