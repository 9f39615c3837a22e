// The CUDA version a container needs, as far as the manifest tells: the
// container's NVIDIA_REQUIRE_CUDA or CUDA_VERSION env, the policy's
// cudaImages, or the image reference (nvidia/cuda tags, cudaX.Y tag parts,
// NGC framework releases YY.MM through NVIDIA's release table; reference
// §10.3). For cuda-driver-too-old.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "rules/k8s/field_path.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard {

struct CudaVersion {
  int major = 0;
  std::optional<int> minor;
  std::optional<int> patch;
  std::string origin;  // for the message: "", "NGC release 24.05", "NVIDIA_REQUIRE_CUDA"
  // Read from an image that carries CUDA forward compatibility for its
  // listed driver branches (an nvidia/cuda tag, an NGC framework release:
  // rules/nvidia/forward_compat.h).
  bool forwardCompatImage = false;
  FieldPath path;      // where it was read
  std::string value;   // the value there

  // "12.4.1", "12.4", "13.x".
  std::string text() const;
};

// Reads up to three dot-separated numbers at `s[pos]` into `v`; the first is
// required. Returns the position after what was read, or npos.
std::size_t readCudaVersion(std::string_view s, std::size_t pos, CudaVersion& v);

// The CUDA version an NGC framework release ("24.05") ships: exact for the
// rows NVIDIA's release notes show, the major only inside the spans where it
// is certain; nullopt elsewhere.
std::optional<CudaVersion> cudaFromNgcRelease(std::string_view release);

// The CUDA version an image reference names, or nullopt.
std::optional<CudaVersion> cudaFromImage(std::string_view image);

// The CUDA version a container needs: its env first (what the container
// runtime enforces), else the policy's cudaImages (the first matching entry
// decides), else the image reference. `path` and `value` say where it was read.
std::optional<CudaVersion> containerCuda(const ContainerRef& container, const Policy& policy);

}  // namespace gpuguard
