# shellcheck shell=bash
# ---- warn-level findings -------------------------------------------------------------
case_begin "policy at warning: 500m RayCluster is admitted with a Warning: line"
kc apply -n e2e-warn -f "$CASES/raycluster-fractional.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-fractional created"
expect_warning gpu-fractional \
    'spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m"' 
case_end

case_begin "policy at warning: missing toleration and driver pin show as Warning: lines"
kc apply -n e2e-warn -f "$CASES/raycluster-no-toleration.yaml"
expect_ok
expect_out "raycluster.ray.io/rc-no-toleration created"
expect_warning gpu-missing-toleration "spec.workerGroupSpecs[0].template.spec.tolerations"
expect_warning gpu-missing-driver-pin "spec.workerGroupSpecs[0].template.spec"
case_end

case_begin "policy at warning: the warning also shows on --dry-run=server and nothing is stored"
kc apply --dry-run=server -n e2e-warn -f "$CASES/jobset-requests-only.yaml"
expect_ok
expect_out "jobset.jobset.x-k8s.io/js-requests-only created (server dry run)"
expect_warning gpu-requests-without-limits "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits"
kc get jobset js-requests-only -n e2e-warn
expect_fail
case_end
