# shellcheck shell=bash
# ---- custom resources: the API server stores any pod template; only gpuguard judges it --
case_begin "RayCluster with 500m GPU is denied with gpuguard's field error"
kc apply -n e2e-strict -f "$CASES/raycluster-fractional.yaml"
expect_fail
expect_out "Error from server (Forbidden)" "$(denied_by $STRICT)" \
    'spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m"' \
    "[gpu-fractional]"
kc get raycluster rc-fractional -n e2e-strict
expect_fail
expect_out "NotFound"
case_end

case_begin "PyTorchJob with GPU requests 1 / limits 2 is denied"
kc apply -n e2e-strict -f "$CASES/pytorchjob-mismatch.yaml"
expect_fail
expect_out "$(denied_by $STRICT)" "pytorchReplicaSpecs" ".template.spec.containers[0].resources.requests" \
    "[gpu-requests-limits-mismatch]"
case_end

case_begin "JobSet with GPU requests but no limits is denied"
kc apply -n e2e-strict -f "$CASES/jobset-requests-only.yaml"
expect_fail
expect_out "$(denied_by $STRICT)" \
    "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources" \
    "[gpu-requests-without-limits]"
case_end

for f in raycluster-good:raycluster.ray.io/rc-good pytorchjob-good:pytorchjob.kubeflow.org/ptj-good \
         jobset-good:jobset.jobset.x-k8s.io/js-good; do
    case_begin "good ${f%%:*} is admitted without warnings"
    kc apply -n e2e-strict -f "$CASES/${f%%:*}.yaml"
    expect_ok
    expect_out "${f#*:} created"
    expect_no_rule_warning
    case_end
done
