// NVIDIA_REQUIRE_* as the NVIDIA container runtime evaluates them when it
// creates a container (nvidia-container-toolkit internal/requirements:
// image.go, constraints/factory.go, logical.go, property.go; reference
// §14.9), for cuda-driver-too-old:
//   - every NVIDIA_REQUIRE_* variable but NVIDIA_REQUIRE_JETPACK must hold,
//     unless NVIDIA_DISABLE_REQUIRE is true;
//   - in one value, alternatives separated by a space are ORed and clauses
//     separated by a comma ANDed; an alternative left without clauses is
//     dropped;
//   - a clause is PROPERTY OP VALUE (OP: != <= >= = < >); cuda, driver and
//     arch compare as semantic versions, brand as a string; a clause on any
//     other property is skipped;
//   - the container is not created when the whole is false ("requirement
//     error: unsatisfied condition: cuda>=12.4").
#pragma once

#include <string>
#include <vector>

#include "rules/k8s/field_path.h"
#include "rules/nvidia/drivers.h"
#include "rules/pod_specs.h"

namespace gpuguard {

struct RequireClause {
  std::string property;            // cuda, driver, arch, brand
  std::string op;                  // = != < <= > >=
  DriverVersion version{0, 0, 0};  // cuda, driver, arch
  std::string text;                // as written: "driver<536"
};

struct Requirement {
  std::vector<std::vector<RequireClause>> alternatives;  // ORed; the clauses of one are ANDed
  FieldPath path;     // the env value
  std::string value;  // as written
};

// The NVIDIA_REQUIRE_* values a container's env sets (the image's own are
// not in the manifest); none when NVIDIA_DISABLE_REQUIRE is true. A value
// the runtime rejects (a clause without an operator, a version that is not
// semver) is left out: the runtime's error is not a driver's.
std::vector<Requirement> containerRequirements(const ContainerRef& container);

// A driver a node may have: a whole version (`full`), or only its branch
// (version[0], any release of it).
struct NodeDriver {
  DriverVersion version;
  bool full = false;
};

// The first clause of `alternative` that is false on every release `d`
// stands for, or nullptr (the alternative may hold there). brand and arch
// are never false: no driver label says which GPU the node has.
const RequireClause* falseClause(const std::vector<RequireClause>& alternative, const NodeDriver& d);

// Whether the runtime refuses the container on `d`, whatever its GPU.
bool requirementFailsOn(const Requirement& req, const NodeDriver& d);

}  // namespace gpuguard
