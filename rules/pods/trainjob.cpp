// Kubeflow Trainer v2: a TrainJob's trainer is a container; its pods' scheduling
// fields come from the partial pod specs beside it (podTemplateOverrides,
// podSpecOverrides, runtimePatches).
#include "rules/pods/walker.h"

#include <algorithm>
#include <array>
#include <span>

namespace gpuguard::pods {

using nlohmann::json;

namespace {

// Whether a replicated job of a TrainJob's runtime, named by a
// podSpecOverrides target or a runtime patch, may run the trainer's pods.
// The Trainer v2 runtimes run the trainer as the job "node"; a custom
// runtime may name it otherwise, and the name, though required, may be
// missing from a hand-written manifest. Only the runtime's other jobs (the
// initializers, the MPI launcher) are known not to be the trainer's:
// reading any other name as the trainer's avoids a false alarm.
bool mayBeTrainersJob(const json& jobRef) {
  if (!jobRef.is_object()) return true;
  auto name = jobRef.find("name");
  if (name == jobRef.end() || !name->is_string()) return true;
  const std::string& job = name->get_ref<const std::string&>();
  return job != "dataset-initializer" && job != "model-initializer" && job != "launcher";
}

bool overridesTrainer(const json& override) {
  auto targets = override.find("targetJobs");
  if (targets == override.end() || !targets->is_array() || targets->empty()) return true;
  return std::any_of(targets->begin(), targets->end(), mayBeTrainersJob);
}

// A partial pod spec that may schedule a TrainJob's trainer, and where it
// is; `spec` is null when a runtime patch for the trainer's job has none.
struct TrainerPodPatch {
  const json* spec;
  FieldPath path;
};

using KeyPath = std::span<const char* const>;

// The map reached from `node` through `keys`, or null.
const json* descend(const json& node, KeyPath keys) {
  const json* at = &node;
  for (const char* key : keys) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at->is_object() ? at : nullptr;
}

FieldPath descendPath(FieldPath path, KeyPath keys) {
  for (const char* key : keys) path = path.field(key);
  return path;
}

// Older Trainer releases: spec.podSpecOverrides[], each entry a partial pod
// spec for the jobs its targetJobs name.
void addOverridesForTrainer(const json& trainJobSpec, const FieldPath& specPath,
                                   std::vector<TrainerPodPatch>& out) {
  auto overrides = trainJobSpec.find("podSpecOverrides");
  if (overrides == trainJobSpec.end() || !overrides->is_array()) return;
  const FieldPath overridesPath = specPath.field("podSpecOverrides");
  for (std::size_t i = 0; i < overrides->size(); ++i) {
    const json& override = (*overrides)[i];
    if (override.is_object() && overridesTrainer(override)) out.push_back({&override, overridesPath.index(i)});
  }
}

// Current Trainer docs (operator-guides/podtemplate-overrides.md):
// spec.podTemplateOverrides[], each entry's `spec` a partial pod spec for the
// jobs its targetJobs name.
void addTemplateOverridesForTrainer(const json& trainJobSpec, const FieldPath& specPath,
                                    std::vector<TrainerPodPatch>& out) {
  auto overrides = trainJobSpec.find("podTemplateOverrides");
  if (overrides == trainJobSpec.end() || !overrides->is_array()) return;
  const FieldPath overridesPath = specPath.field("podTemplateOverrides");
  for (std::size_t i = 0; i < overrides->size(); ++i) {
    const json& override = (*overrides)[i];
    if (!override.is_object() || !overridesTrainer(override)) continue;
    auto spec = override.find("spec");
    out.push_back({spec != override.end() && spec->is_object() ? &*spec : nullptr,
                   overridesPath.index(i).field("spec")});
  }
}

constexpr std::array<const char*, 3> kPatchToJobSet = {"trainingRuntimeSpec", "template", "spec"};

constexpr std::array<const char*, 4> kJobToPodSpec = {"template", "spec", "template", "spec"};

// Current releases: spec.runtimePatches[], each (keyed by manager) patching
// replicated jobs by name, a job's partial pod spec in
// trainingRuntimeSpec.template.spec.replicatedJobs[j].template.spec.template.spec
// (kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go).
void addRuntimePatchesForTrainer(const json& trainJobSpec, const FieldPath& specPath,
                                        std::vector<TrainerPodPatch>& out) {
  auto patches = trainJobSpec.find("runtimePatches");
  if (patches == trainJobSpec.end() || !patches->is_array()) return;
  for (std::size_t i = 0; i < patches->size(); ++i) {
    const json* jobSetSpec = descend((*patches)[i], kPatchToJobSet);
    if (!jobSetSpec) continue;
    auto jobs = jobSetSpec->find("replicatedJobs");
    if (jobs == jobSetSpec->end() || !jobs->is_array()) continue;
    const FieldPath jobsPath =
        descendPath(specPath.field("runtimePatches").index(i), kPatchToJobSet).field("replicatedJobs");
    for (std::size_t j = 0; j < jobs->size(); ++j) {
      const json& job = (*jobs)[j];
      if (!job.is_object() || !mayBeTrainersJob(job)) continue;
      out.push_back({descend(job, kJobToPodSpec), descendPath(jobsPath.index(j), kJobToPodSpec)});
    }
  }
}

std::size_t listSize(const json& holder, const char* name) {
  auto list = holder.find(name);
  return list != holder.end() && list->is_array() ? list->size() : 0;
}

// Where the trainer's missing fields go: in its first partial pod spec
// (one that exists, if any does), or else in a new entry of the list the
// TrainJob uses, podSpecOverrides when it uses neither.
FieldPath trainerFieldsHome(const json& trainJobSpec, const FieldPath& specPath,
                                   const std::vector<TrainerPodPatch>& patches) {
  auto existing = std::find_if(patches.begin(), patches.end(), [](const TrainerPodPatch& p) { return p.spec; });
  if (existing != patches.end()) return existing->path;
  if (!patches.empty()) return patches.front().path;
  if (trainJobSpec.contains("podTemplateOverrides")) {
    return specPath.field("podTemplateOverrides").index(listSize(trainJobSpec, "podTemplateOverrides")).field("spec");
  }
  if (trainJobSpec.contains("runtimePatches") && !trainJobSpec.contains("podSpecOverrides")) {
    const FieldPath newPatch = specPath.field("runtimePatches").index(listSize(trainJobSpec, "runtimePatches"));
    return descendPath(descendPath(newPatch, kPatchToJobSet).field("replicatedJobs").index(0), kJobToPodSpec);
  }
  return specPath.field("podSpecOverrides").index(listSize(trainJobSpec, "podSpecOverrides"));
}

constexpr std::string_view kTrainerPlacementHint =
    "; a TrainJob trainer takes it from the spec of a spec.podTemplateOverrides entry with targetJobs "
    "[{name: node}] (a spec.podSpecOverrides entry in older releases) or, in "
    "Trainer releases with spec.runtimePatches, from a patch's trainingRuntimeSpec.template.spec."
    "replicatedJobs item named node, in template.spec.template.spec";

}  // namespace

bool Walker::inTrainJob() const { return ownerKind && *ownerKind == "TrainJob"; }

// Kubeflow Trainer v2: a TrainJob's trainer (Trainer has no scheduling
// fields) gets its pods' tolerations, nodeSelector and affinity from the
// partial pod specs beside it that apply to its job, the first that sets
// each. Unset, a finding points where it would be written.
void Walker::scheduleByPatches(PodSite& site) const {
  if (chain.size() <= ownerChainIndex) return;
  const json& spec = *chain.back().node;
  const FieldPath specPath = chain.back().path->toFieldPath();
  std::vector<TrainerPodPatch> patches;
  addTemplateOverridesForTrainer(spec, specPath, patches);
  addOverridesForTrainer(spec, specPath, patches);
  addRuntimePatchesForTrainer(spec, specPath, patches);
  const FieldPath home = trainerFieldsHome(spec, specPath, patches);
  auto field = [&](const char* name) -> PodField {
    for (const TrainerPodPatch& patch : patches) {
      if (!patch.spec) continue;
      PodField f = fieldOf(*patch.spec, patch.path, name);
      if (f.value) return f;
    }
    return {nullptr, home.field(name)};
  };
  site.nodeSelector = field("nodeSelector");
  site.affinity = field("affinity");
  site.tolerations = field("tolerations");
  if (!spec.contains("podSpecOverrides") && !spec.contains("runtimePatches") && !spec.contains("podTemplateOverrides")) {
    site.placementHint = kTrainerPlacementHint;
  }
  openToTrainingRuntime(site, spec, specPath);
}

// The trainer's pods are the runtime's (spec.runtimeRef: a
// ClusterTrainingRuntime or TrainingRuntime) with the TrainJob's overrides
// "applied on top of the TrainingRuntime configuration" (Trainer's
// operator-guides/podtemplate-overrides.md): a field no override sets is the
// runtime's, and an override's tolerations are added to the runtime's. The
// runtime is judged as an object of its own; here those fields are opaque.
void Walker::openToTrainingRuntime(PodSite& site, const json& trainJobSpec, const FieldPath& specPath) {
  auto runtimeRef = trainJobSpec.find("runtimeRef");
  if (runtimeRef == trainJobSpec.end() || !runtimeRef->is_object()) return;
  openPlacementToRuntime(site, specPath.field("runtimeRef"));
  site.tolerations.opaque = true;
}

namespace {

void openToRuntime(PodField& field, const FieldPath& runtimePath) {
  if (field.value) return;  // written here: the operator's merge keeps it
  field.path = runtimePath;
  field.opaque = true;
}

}  // namespace

void Walker::openPlacementToRuntime(PodSite& site, const FieldPath& runtimePath) {
  openToRuntime(site.nodeSelector, runtimePath);
  openToRuntime(site.affinity, runtimePath);
  openToRuntime(site.tolerations, runtimePath);
}

}  // namespace gpuguard::pods
