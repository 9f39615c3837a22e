// What a node selection says of the NVIDIA driver of the nodes it admits,
// read from the labels GPU Feature Discovery derives from the driver
// (cuda.driver-version.*, cuda.runtime-version.*; rules/nvidia/gfd_labels.h):
// per ORed term, the bounds on each label family, the lowest driver admitted,
// and the drivers that matter to an NVIDIA_REQUIRE_* requirement
// (rules/nvidia/require.h). For cuda-driver-too-old.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rules/k8s/node_selection.h"
#include "rules/nvidia/drivers.h"
#include "rules/nvidia/require.h"

namespace gpuguard {

// One numeric label family inside one term: In sets, NotIn, Gt/Lt bounds on
// the major label, In sets on the full label.
struct LabelFamily {
  std::optional<std::vector<long long>> majorIn;  // intersected across requirements
  std::vector<long long> majorNotIn;
  std::optional<long long> gt, lt;
  std::optional<std::vector<DriverVersion>> fullIn;
  bool impossible = false;  // a Gt/Lt that never matches, or an In that cannot match
  bool isDriverFamily = false;  // driver majors (real branches only), not CUDA versions
  const NodeRequirement* evidence = nullptr;

  // A requirement on the major label (In, NotIn, Gt, Lt; a Gt/Lt value that
  // is no integer makes the term impossible, as the scheduler never matches it).
  void addMajor(const NodeRequirement& r);
  // A requirement on the full label: In values of `minParts` to `maxParts`
  // numbers ("550.54.15", "12.4"); Gt/Lt never match such a value.
  void addFull(const NodeRequirement& r, int minParts, int maxParts);
  bool majorAdmits(long long m) const;

  // The lowest version admitted: nullopt when unconstrained from below.
  // `full` tells whether minor and patch are known.
  struct Lowest {
    DriverVersion version;
    bool full;
  };
  std::optional<Lowest> lowest(bool& matchesNothing) const;
  // The lowest driver major this family admits above `above`: the lowest
  // known branch (no Linux driver 576 exists), or above + 1 beyond the newest
  // known branch; nullopt when none is admitted.
  std::optional<long long> lowestDriverAbove(long long above) const;

 private:
  void intersectMajor(std::vector<long long> values);
  void intersectFull(std::vector<DriverVersion> values);
};

// The driver labels (driver) and the runtime-version labels (runtime) one term constrains.
struct TermFamilies {
  LabelFamily driver, runtime;
};

// The two families of one term; other labels are not read.
TermFamilies familiesOf(const NodeTerm& term);

// A driver the node selection admits, and the requirement that says so.
struct AdmittedDriver : NodeDriver {
  std::string evidence;
};

// Whether the runtime-version labels of a term admit a branch.
bool runtimeAdmits(const LabelFamily& runtime, const DriverBranch& b);

// Whether the runtime-version labels bound the driver at all.
bool runtimeConstrains(const LabelFamily& runtime);

// The drivers a term admits, as far as they matter to a requirement: the
// values of an In, the known branches above a Gt, or the branches whose CUDA
// version the runtime-version labels admit. nullopt when the term does not
// bound the driver from below (the pod may land on any driver).
std::optional<std::vector<AdmittedDriver>> admittedDrivers(const NodeTerm& term);

// The lowest admitted driver on which the requirement is false, when every
// term bounds the driver.
std::optional<AdmittedDriver> requirementFailure(const Requirement& req, const std::vector<NodeTerm>& terms);

// The lowest known branch on which some alternative may hold, for the advice.
std::optional<long long> lowestBranchThatMaySatisfy(const Requirement& req, long long above);

}  // namespace gpuguard
