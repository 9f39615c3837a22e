# Sourced by test/bench/admission_vs_peers.sh and admission_floor.sh once the e2e control plane runs
# (e2e_* from test/e2e/lib.sh): what both judge against, and how both register a webhook.

# The cluster every configuration judges against: two 8-GPU nodes (tainted nvidia.com/gpu, as the
# GPU Operator leaves them) on CUDA drivers 550 and 570, as GPU Feature Discovery labels them.
# gpuguard-webhook reads them (--cluster-facts=auto finds $KUBECONFIG): a correct pod is admitted
# without a word, and an unpinned pod is denied because the two drivers differ.
bench_gpu_nodes() {  # the two GPU nodes (gpu.count labelled too); 1 with a message when one is not created
  local node
  for node in gpu-550:550 gpu-570:570; do
    e2e_add_gpu_node "${node%%:*}" "${node##*:}" ',"nvidia.com/gpu.count":"8"' ||
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
