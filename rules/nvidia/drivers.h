// NVIDIA drivers and the CUDA versions they serve: the driver branches and
// the newest CUDA each supports (what GFD writes into cuda.runtime-version.*;
// reference §10.2, §14.8), and the driver a CUDA version needs under
// minor-version compatibility (reference §10.1).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "rules/nvidia/cuda_version.h"

namespace gpuguard {

// A driver version {major, minor, patch} (550.54.15).
using DriverVersion = std::array<long long, 3>;

// A driver branch and the newest CUDA its drivers support, which GFD writes
// into cuda.runtime-version.* (reference §10.2 and §14.8).
struct DriverBranch {
  long long driver;
  int cudaMajor, cudaMinor;
};
std::span<const DriverBranch> driverBranches();            // oldest first
const DriverBranch* knownBranch(long long driverMajor);  // nullptr for a branch not in the table

// The lowest driver a CUDA version runs on, as NVIDIA writes it, and why.
struct DriverFloor {
  DriverVersion version;
  std::string_view text;  // as NVIDIA writes it: "525.60.13"
  std::string_view why;   // "CUDA 12.x minor-version compatibility"
};
// nullopt for a CUDA version whose floor is not known (10.x with an unknown minor, 9.x, 14.x).
std::optional<DriverFloor> floorFor(const CudaVersion& cuda);

// "550" (only the branch known) or "550.54.15" / "550.54" (`full`).
std::string driverVersionText(const DriverVersion& v, bool full);

// "550.54.15" or "550.54" -> {550, 54, 15}: `minParts` to `maxParts` numbers
// of at most 9 digits each; nullopt for anything else.
std::optional<DriverVersion> parseDottedVersion(std::string_view s, int minParts, int maxParts);

}  // namespace gpuguard
