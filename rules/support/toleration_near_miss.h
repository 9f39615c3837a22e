// The toleration that comes closest to a taint it does not tolerate, for
// the findings that say a pod lacks the GPU toleration (gpu-missing-
// toleration, device-plugin-config, gpu-node-agent-toleration): an author
// who wrote a toleration meant one, and "no toleration" hides the typo.
#pragma once

#include <string>

#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard::checks {

// "; the closest is <path> {…}: <why it misses>" for the toleration of the
// pod that misses `taint` by the fewest differences, each named:
//   - a key one to three edits (or only letter case) away from the taint's;
//   - another effect;
//   - operator Equal (or none) with a value other than the taint's, or
//     against a taint whose value the policy leaves open;
//   - an operator that is neither Exists nor Equal;
//   - a toleration that would match, written inside a container, where the
//     Container type has no such field.
// Tolerations with an unrelated key are no near miss. "" when none is near.
std::string nearMissNote(const PodSite& site, const Taint& taint);

}  // namespace gpuguard::checks
