// Manifests that tests of several front ends judge alike (the linter's
// runs, fixes and SARIF, the webhook's request parsing).
#pragma once

namespace gpuguard::testing {

// A tolerating, pinned GPU pod that asks for its GPU in requests only: one
// error, gpu-requests-without-limits on line 14, which --fix fixes by
// renaming requests to limits.
inline constexpr const char* kRequestsOnlyPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  nodeSelector:
    nvidia.com/cuda.driver-version.major: "550"
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      requests:
        nvidia.com/gpu: 1
)";

}  // namespace gpuguard::testing
