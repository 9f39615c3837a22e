# Sourced by test/bench/admission_vs_peers.sh and admission_floor.sh once the e2e control plane runs
# (e2e_* from test/e2e/lib.sh): what both judge against, and how both register a webhook.

# The cluster every configuration judges against: two 8-GPU nodes (tainted nvidia.com/gpu, as the
# GPU Operator leaves them) on CUDA drivers 550 and 570, as GPU Feature Discovery labels them.
# gpuguard-webhook reads them (--cluster-facts=auto finds $KUBECONFIG): a correct pod is admitted
# without a word, and an unpinned pod is denied because the two drivers differ.
bench_gpu_node() {  # bench_gpu_node NAME DRIVER_MAJOR : the Node as JSON
  cat <<JSON
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$1","labels":{"kubernetes.io/hostname":"$1",
 "nvidia.com/gpu.present":"true","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"8",
 "nvidia.com/cuda.driver.major":"$2","nvidia.com/cuda.driver.minor":"54","nvidia.com/cuda.driver.rev":"15"}},
 "spec":{"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},
 "status":{"capacity":{"cpu":"96","memory":"1Ti","pods":"110","nvidia.com/gpu":"8"},
           "allocatable":{"cpu":"96","memory":"1Ti","pods":"110","nvidia.com/gpu":"8"},
           "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status"}]}}
JSON
}
bench_gpu_nodes() {  # the two GPU nodes; 1 with a message when one is not created
  local node
  # No node lifecycle controller runs here to lift TaintNodesByCondition's not-ready taint: lift it as it would.
  for node in gpu-550:550 gpu-570:570; do
    bench_gpu_node "${node%%:*}" "${node##*:}" | e2e_kubectl create -f - >/dev/null &&
      e2e_kubectl taint node "${node%%:*}" node.kubernetes.io/not-ready:NoSchedule- >/dev/null ||
      { echo "GPU node ${node%%:*} not created"; return 1; }
  done
}

# bench_url_webhook NAME URL FAILURE_POLICY TIMEOUT [LABEL] > a ValidatingWebhookConfiguration for
# pods and pod templates in the namespaces labelled gpuguard-bench=LABEL (default peers), trusting
# $CA_BUNDLE: gpuguard's registration, which every webhook measured beside it gets too.
bench_url_webhook() {
  cat <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: $1}
webhooks:
- name: $1.bench.gpuguard.io
  clientConfig: {url: "$2", caBundle: "$CA_BUNDLE"}
  rules:
  - {apiGroups: ["", apps, batch, ray.io, kubeflow.org], apiVersions: ["*"], operations: [CREATE, UPDATE],
     resources: [pods, deployments, jobs, rayclusters, pytorchjobs]}
  namespaceSelector: {matchLabels: {gpuguard-bench: ${5:-peers}}}
  failurePolicy: $3
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: $4
YAML
}
