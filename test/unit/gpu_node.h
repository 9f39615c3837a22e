// A GPU Node as the kubelet, the device plugin and GPU Feature Discovery report
// it, for the cluster facts of a test (clusterOf in test_support.h): a test
// names what it is about and leaves the rest as on an ordinary 8-GPU machine.
//   clusterOf(gpuNode({.name = "gpu-t", .driver = "570", .taints = kGpuPresentTaint}))
#pragma once

#include <string>

namespace gpuguard::testing {

// The GPU Operator's taint, and the taint with GKE's value.
inline const std::string kGpuTaint = "[{key: nvidia.com/gpu, effect: NoSchedule}]";
inline const std::string kGpuPresentTaint = "[{key: nvidia.com/gpu, value: present, effect: NoSchedule}]";

// Every member has a default, so that a test names only what it is about
// (GCC's -Wmissing-field-initializers asks it of designated initializers).
struct GpuNode {
  std::string name = "";
  // GFD's nvidia.com/cuda.driver-version.major; "" for no driver label.
  std::string driver = "";
  // spec.taints, a flow list; "" for none.
  std::string taints = "";
  // The GPU resources of status.allocatable, flow-map entries.
  std::string gpus = "nvidia.com/gpu: \"8\"";
  // Labels besides kubernetes.io/hostname, GFD's and the driver's: flow-map entries.
  std::string labels = "";
  // More lines under spec, each indented two spaces (a cordon).
  std::string spec = "";
  // What status.allocatable holds besides the GPUs.
  std::string machine = "cpu: \"96\", memory: 1Ti, pods: \"110\"";
  // status.capacity, flow-map entries; "" for none.
  std::string capacity = "";
  // GFD's nvidia.com/gpu.present: "true" (false: no GPU Feature Discovery on the node).
  bool gfd = true;
};

// The Node as one YAML document, "---" after it.
inline std::string gpuNode(const GpuNode& node) {
  std::string labels = "{kubernetes.io/hostname: " + node.name;
  if (node.gfd) labels += ", nvidia.com/gpu.present: \"true\"";
  if (!node.driver.empty()) labels += ", nvidia.com/cuda.driver-version.major: \"" + node.driver + "\"";
  if (!node.labels.empty()) labels += ", " + node.labels;
  std::string spec = node.taints.empty() ? "" : "  taints: " + node.taints + "\n";
  spec += node.spec;
  const std::string allocatable =
      node.machine.empty() || node.gpus.empty() ? node.machine + node.gpus : node.machine + ", " + node.gpus;
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + node.name + "\n  labels: " + labels + "}\n" +
         (spec.empty() ? "" : "spec:\n" + spec) + "status:\n  allocatable: {" + allocatable + "}\n" +
         (node.capacity.empty() ? "" : "  capacity: {" + node.capacity + "}\n") + "---\n";
}

}  // namespace gpuguard::testing
