#include "rules/nvidia/forward_compat.h"

#include <algorithm>
#include <array>
#include <span>

namespace gpuguard {
namespace {

struct CompatList {
  int cudaMajor, cudaMinor;
  std::array<long long, 4> branches;  // ascending; 0 pads
  bool complete;                      // false: the recorded list is cut off after its last branch
  std::string_view source;
};

// Only what the reference's sources record (kubernetes-gpu-semantics.md):
// - CUDA 12.4: NGC 24.05's release notes (CUDA 12.4.1) on data-center GPUs:
//   "470.57 (or later R470), 525.85 (or later R525), 535.86 (or later R535),
//   or 545.23 (or later R545)" (§10.2); nvidia/cuda 12.4.1's
//   NVIDIA_REQUIRE_CUDA names brand=tesla,driver>=470,driver<471 and 525.
//   (From 525 on, CUDA 12.x runs by minor-version compatibility anyway.)
// - CUDA 13.0: nvidia/cuda 13.0.x images' NVIDIA_REQUIRE_CUDA, recorded for
//   13.0.2, names branches 535, 550 and 565 for the data-center brands and
//   is cut off there (§14.9).
constexpr std::array<CompatList, 2> kLists{{
    {12, 4, {470, 525, 535, 545}, true,
     "NGC 24.05 release notes and nvidia/cuda 12.4.1's NVIDIA_REQUIRE_CUDA: R470, R525, R535, R545"},
    {13, 0, {535, 550, 565, 0}, false, "nvidia/cuda 13.0.x's NVIDIA_REQUIRE_CUDA: brand clauses for R535, R550, R565"},
}};

const CompatList* listOf(const CudaVersion& cuda) {
  if (!cuda.forwardCompatImage || !cuda.minor) return nullptr;
  for (const CompatList& l : kLists) {
    if (l.cudaMajor == cuda.major && l.cudaMinor == *cuda.minor) return &l;
  }
  return nullptr;
}


}  // namespace

ForwardCompat forwardCompatOn(const CudaVersion& cuda, long long branch) {
  const CompatList* list = listOf(cuda);
  if (!list) return ForwardCompat::Unknown;
  long long last = 0;
  for (long long b : list->branches) {
    if (b == branch) return ForwardCompat::Listed;
    last = std::max(last, b);
  }
  return !list->complete && branch > last ? ForwardCompat::Unverified : ForwardCompat::NotListed;
}

std::string_view forwardCompatSource(const CudaVersion& cuda) {
  const CompatList* list = listOf(cuda);
  return list ? list->source : std::string_view{};
}

bool namesGeForce(std::string_view product) {
  constexpr std::string_view kGeForce = "geforce";
  const auto match = std::search(product.begin(), product.end(), kGeForce.begin(), kGeForce.end(),
                                 [](char a, char b) { return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b; });
  return match != product.end();
}

std::optional<std::string> geforceOnlyTerm(const NodeTerm& term) {
  for (const NodeRequirement& r : term.requirements) {
    if (r.key != "nvidia.com/gpu.product" || r.op != "In" || r.values.empty()) continue;
    if (std::all_of(r.values.begin(), r.values.end(), [](const std::string& v) { return namesGeForce(v); })) {
      return describeRequirement(r, term);
    }
  }
  return std::nullopt;
}

}  // namespace gpuguard
