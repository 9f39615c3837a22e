// The diagnosis as people and programs read it: a compact table per pod
// (node, GPU capacity/allocatable/free, selector, affinity, taints, verdict)
// followed by the verdict, the dominant reason and notes; or one JSON document.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedule/diagnose.h"
#include "schedule/node_snapshot.h"

namespace gpuguard::schedule {

void writeText(std::ostream& out, const std::vector<PodDiagnosis>& pods, const Snapshot& snapshot);
// One pod's block of writeText: title, requests, placement, the node table,
// the verdict, the dominant reason and the notes.
void writePodText(std::ostream& out, const PodDiagnosis& pod);

nlohmann::json toJson(const PodDiagnosis& pod);
// {"schedulable": every pod schedulable somewhere, "snapshot": {...}, "pods": [...]}
nlohmann::json toJson(const std::vector<PodDiagnosis>& pods, const Snapshot& snapshot);

}  // namespace gpuguard::schedule
