// CUDA forward compatibility: a CUDA version newer than the driver's runs on
// an older driver branch through the cuda-compat package, on NVIDIA
// data-center GPUs only (CUDA Compatibility guide, "Forward Compatibility";
// reference §14.9, §10.2, §15.7). The images that carry it say on which
// branches: nvidia/cuda images in their NVIDIA_REQUIRE_CUDA brand clauses,
// NGC framework images in their release notes. For cuda-driver-too-old.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/k8s/node_selection.h"
#include "rules/nvidia/cuda_version.h"

namespace gpuguard {

enum class ForwardCompat {
  Unknown,     // no source lists this image's branches: the floor applies
  NotListed,   // the image's list is known and does not name the branch
  Listed,      // the image admits the branch on data-center GPUs
  Unverified,  // beyond the last branch the recorded list shows (it may go on)
};

// What an image whose CUDA version is `cuda` admits on driver branch
// `branch` (below its minor-version floor) on data-center GPUs. Only images
// that carry the list (nvidia/cuda tags, NGC framework releases:
// CudaVersion::forwardCompatImage) and versions whose list a source records
// are known; everything else is Unknown.
ForwardCompat forwardCompatOn(const CudaVersion& cuda, long long branch);

// Where the list of `cuda` comes from, for the message.
std::string_view forwardCompatSource(const CudaVersion& cuda);

// Whether a GFD gpu.product value ("NVIDIA-GeForce-RTX-4090") names a GeForce GPU.
bool namesGeForce(std::string_view product);

// The requirement of a term that admits only GeForce GPUs (gpu.product In
// values all naming GeForce), described: forward compatibility fails there
// (cuInit returns CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, §15.7).
std::optional<std::string> geforceOnlyTerm(const NodeTerm& term);

}  // namespace gpuguard
