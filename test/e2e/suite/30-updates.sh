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

# Red team 34 (D3): the UPDATE review of a large stored object carries object and oldObject,
# with managedFields, as escaped JSON: 3.3 MB here, over the webhook's old 3 MiB limit (413,
# or "broken pipe" when it answered before reading the body), though the client's request is
# 0.7 MB. The Terminating Deployment could then never lose its finalizer.
case_begin "label, rollout restart and finalizer removal of a Deployment whose UPDATE review is 3.3 MB are admitted"
python3 - "$E2E_WORK/dep-big.json" <<'PY'
import json, sys
env = [{"name": "CONFIG_VALUE_%05d" % i, "value": "v%05d & <%d>" % (i, i)} for i in range(14000)]
dep = {"apiVersion": "apps/v1", "kind": "Deployment",
       "metadata": {"name": "dep-big", "finalizers": ["example.com/cleanup"]},
       "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "dep-big"}},
                "template": {"metadata": {"labels": {"app": "dep-big"}},
                             "spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                                      "nodeSelector": {"nvidia.com/cuda.driver-version.major": "535"},
                                      "containers": [{"name": "c", "image": "busybox:1.36", "env": env,
                                                      "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
json.dump(dep, open(sys.argv[1], "w"))
PY
kc create -n e2e-strict -f "$E2E_WORK/dep-big.json"
expect_ok
kc label deployment dep-big -n e2e-strict team=ml
expect_ok
expect_out "deployment.apps/dep-big labeled"
kc rollout restart deployment dep-big -n e2e-strict
expect_ok
expect_out "deployment.apps/dep-big restarted"
kc delete deployment dep-big -n e2e-strict --wait=false
expect_ok
kc patch deployment dep-big -n e2e-strict --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
expect_ok
kc wait --for=delete deployment/dep-big -n e2e-strict --timeout=20s
expect_ok
case_end
