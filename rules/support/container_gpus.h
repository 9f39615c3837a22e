// What one container of a pod gets and sees of GPUs: the devices handed to
// it (GPU resources and the GPU claims it lists) and the environment that
// steers the NVIDIA runtime and CUDA. Shared by nvidia-visible-devices-env
// and cuda-visible-devices-index. Facts: kubernetes-gpu-semantics.md §9.3,
// §15.3, §15.7, §15.8.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "rules/gpu_use.h"
#include "rules/k8s/field_path.h"
#include "rules/pod_specs.h"

namespace gpuguard::checks {

struct ContainerGpus {
  bool asksGpu = false;  // a GPU resource above zero, or a GPU claim the container lists
  // Devices the device plugin or DRA driver hands the container, when the
  // input tells: whole GPUs plus MIG or shared units. nullopt: a claim whose
  // template the input does not hold, or one with an allocationMode All
  // request (every matching device of the node: no manifest tells how many).
  std::optional<long long> devices;
  // The devices when every firstAvailable request of its claims gets its
  // first alternative, which the scheduler allocates whenever a node can
  // (devices: the fewest any allocation gives). Equal to devices without
  // such lists.
  std::optional<long long> preferredDevices;
  bool mig = false;  // some of them are MIG devices (a CUDA process sees one of them)
};
ContainerGpus containerGpus(const PodSite& site, const ContainerRef& container, const GpuFacts& facts);

// An env entry with a literal value (valueFrom is unknown here); the last
// entry of the name wins, as the kubelet builds the environment.
struct LiteralEnv {
  std::string value;
  FieldPath path;  // ...env[i].value
};
std::optional<LiteralEnv> literalEnv(const ContainerRef& container, std::string_view name);

// NVIDIA's own node agents, by image: the device plugin, GPU Feature
// Discovery, the DCGM exporter, the MIG manager, the DRA driver, the GPU
// Operator's driver, toolkit and validator. They read every GPU of the node
// by design.
bool isNvidiaNodeAgentImage(std::string_view image);

}  // namespace gpuguard::checks
