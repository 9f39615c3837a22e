# shellcheck shell=bash
# ---- what kube-controller-manager's controllers create from an owner's template ------------
# Red team 34 D6: a Deployment admitted on a one-driver cluster; a node group of another driver
# joins; `kubectl rollout restart` is allowed ("already present"), but the ReplicaSet the controller
# then creates, and every replacement pod, were denied: rollouts and self-healing stopped, the
# reason only in events. A child a workload controller creates is judged at its owner: its errors
# warn. The e2e control plane runs no controller manager: the admin impersonates the controllers'
# service accounts, which the API server authenticates and names in request.userInfo as it does
# for the controllers themselves.
cat >"$E2E_WORK/child-pod.yaml" <<'EOF2'
# What the ReplicaSet controller creates from a template without the GPU toleration.
apiVersion: v1
kind: Pod
metadata:
  generateName: legacy-6c7d8-
  labels: {app: legacy, pod-template-hash: 6c7d8}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: legacy-6c7d8, uid: 8f0c2d3e-1b4a-4c5d-9e6f-7a8b9c0d1e2f, controller: true}
spec:
  nodeSelector:
    nvidia.com/cuda.driver-version.major: "535"
  containers:
  - name: c
    image: busybox:1.36
    resources:
      limits:
        nvidia.com/gpu: 1
EOF2

case_begin "a pod the ReplicaSet controller creates is judged at its owner: its error is a warning naming the ReplicaSet"
kc create -n e2e-strict -f "$E2E_WORK/child-pod.yaml" --dry-run=server \
    --as=system:serviceaccount:kube-system:replicaset-controller
expect_ok
expect_warning gpu-missing-toleration "created by its controller from ReplicaSet/legacy-6c7d8"
case_end

case_begin "the same pod with the same ownerReference, written by a user, is denied (anyone can write an ownerReference)"
kc create -n e2e-strict -f "$E2E_WORK/child-pod.yaml" --dry-run=server
expect_fail
expect_out "$(denied_by $STRICT)" "[gpu-missing-toleration]"
case_end
